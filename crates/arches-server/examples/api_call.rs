//! Test helper: one API call over the Unix socket, run by the permission test
//! as another user (`setpriv`). Prints the HTTP status on the first line and
//! the body on the second.
//!
//! `api_call SOCKET METHOD PATH [JSON]`

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [socket, method, path, rest @ ..] = args.as_slice() else {
        eprintln!("usage: api_call SOCKET METHOD PATH [JSON]");
        return ExitCode::from(2);
    };
    let client = match reqwest::blocking::Client::builder()
        .unix_socket(socket.as_str())
        .build()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("api_call: {e}");
            return ExitCode::FAILURE;
        }
    };
    let url = format!("http://localhost{path}");
    let req = match method.as_str() {
        "GET" => client.get(url),
        _ => client
            .post(url)
            .header("content-type", "application/json")
            .body(rest.first().cloned().unwrap_or_default()),
    };
    match req.send() {
        Ok(r) => {
            println!("{}", r.status().as_u16());
            println!("{}", r.text().unwrap_or_default());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("api_call: {e}");
            ExitCode::FAILURE
        }
    }
}
