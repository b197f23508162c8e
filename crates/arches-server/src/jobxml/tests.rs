use super::*;

fn base() -> SubmitRequest {
    SubmitRequest {
        submit_dir: "/home/alice/run".into(),
        submit_host: "login1".into(),
        submit_args: "-l walltime=1:00 job.sh".into(),
        ..SubmitRequest::default()
    }
}

#[test]
fn pack_is_moabs_and_unpack_inverts_it() {
    // The example of "Submitting Jobs via msub in XML".
    assert_eq!(
        pack("#!/bin/sh\nsleep 1000"),
        "\\START\\23!/bin/sh\\0asleep\\201000"
    );
    assert_eq!(
        unpack("\\START\\23!/bin/sh\\0asleep\\201000").unwrap(),
        "#!/bin/sh\nsleep 1000"
    );
    let nasty = "a;b<c>d\"e\\f\tg\u{7}h é & ' #x\r\n";
    let p = pack(nasty);
    assert!(!p.contains(['<', '>', '"', ';', '#', ' ', '\n']), "{p}");
    assert_eq!(unpack(&p).unwrap(), nasty);
    // Unpacked text is taken as is; bad escapes are errors.
    assert_eq!(unpack("echo hi").unwrap(), "echo hi");
    assert!(unpack("\\START\\zz")
        .unwrap_err()
        .contains("invalid escape"));
    assert!(unpack("\\START\\f").is_err());
    assert!(unpack("\\START\\ff").unwrap_err().contains("not UTF-8"));
}

fn full() -> SubmitRequest {
    SubmitRequest {
        script: "#!/bin/sh\n#PBS -N x\necho \"<hi>\" & ; exit 0\n".into(),
        script_path: Some("/home/alice/run/job.sh".into()),
        name: Some("job.sh".into()),
        resources: vec![
            "nodes=2:ppn=4:fast,walltime=1:00:00".into(),
            "pmem=1gb,procs=3,mem=2gb,feature=big,qos=high".into(),
            "walltime=bogus".into(),
        ],
        extensions: vec![
            "x=STAGEIN:file:///archive/in.dat,file:///scratch/".into(),
            "depend=afterok:12".into(),
        ],
        class: Some("batch".into()),
        account: Some("proj&co".into()),
        start_after: Some("202501011200".into()),
        hold: true,
        rerunable: Some(false),
        priority: Some(-5),
        workdir: Some("/scratch/alice".into()),
        submit_dir: "/home/alice/run".into(),
        output: Some("out/".into()),
        error: Some("/tmp/e".into()),
        join: true,
        join_to_error: true,
        shell: Some("/bin/bash".into()),
        env: vec![
            ("A".into(), "1".into()),
            ("PATH".into(), "/bin:/usr/bin".into()),
        ],
        moab_env: true,
        mail_options: Some("abe".into()),
        mail_list: Some("alice@example.org,bob".into()),
        submit_args: "-h job.sh".into(),
        submit_host: "login1".into(),
        job_xml: None,
        array: Some("1-9:2%3".into()),
        args: vec![
            "one".into(),
            "two words".into(),
            String::new(),
            "a<b;#c".into(),
        ],
        interactive: false,
    }
}

#[test]
fn every_field_round_trips() {
    let req = full();
    let xml = to_xml(&req, "alice", "staff");
    assert!(xml.starts_with("<job>\n  <Owner>alice</Owner>\n  <UserId>alice</UserId>\n  <GroupId>staff</GroupId>\n  <InitialWorkingDirectory>/scratch/alice</InitialWorkingDirectory>\n"), "{xml}");
    assert!(
        xml.contains("<WallclockDuration>3600</WallclockDuration>"),
        "{xml}"
    );
    assert!(
        xml.contains("<Resource Name=\"walltime\">bogus</Resource>"),
        "{xml}"
    );
    assert!(xml.contains("<NotificationList URI=\"alice@example.org,bob\">JobStart,JobEnd,JobFail</NotificationList>"), "{xml}");
    assert!(xml.contains("<ProjectId>proj&amp;co</ProjectId>"), "{xml}");
    assert!(
        xml.contains("<Environment>A=1~rs;PATH=/bin:/usr/bin~rs;</Environment>"),
        "{xml}"
    );
    assert!(
        xml.contains(
            "<Arguments>\\STARTone \\STARTtwo\\20words \\START \\STARTa\\3cb\\3b\\23c</Arguments>"
        ),
        "{xml}"
    );
    assert!(xml.contains("<JobArray>1-9:2%3</JobArray>"), "{xml}");
    let (back, id) = from_xml(&xml, &base()).unwrap();
    assert_eq!(
        id,
        Identity {
            user: Some("alice".into()),
            group: Some("staff".into())
        }
    );
    let mut want = req.clone();
    // Resources come back one list, walltime in seconds, letters in Moab's order.
    want.resources = vec![
        "nodes=2:ppn=4:fast,walltime=3600,pmem=1gb,procs=3,mem=2gb,feature=big,qos=high,walltime=bogus".into(),
    ];
    want.mail_options = Some("bea".into());
    assert_eq!(back, want);
    // A minimal submission too (stdin script, no workdir).
    let min = SubmitRequest {
        script: "sleep 1\n".into(),
        name: Some("STDIN".into()),
        ..base()
    };
    let (back, _) = from_xml(&to_xml(&min, "alice", "staff"), &base()).unwrap();
    assert_eq!(back, min);
}

#[test]
fn moabs_minimal_job_is_accepted() {
    let (r, id) = from_xml(
        "<job>\n  <SubmitString>\\START\\23!/bin/sh\\0asleep\\201000</SubmitString>\n</job>",
        &base(),
    )
    .unwrap();
    assert_eq!(r.script, "#!/bin/sh\nsleep 1000");
    assert_eq!(r.submit_dir, "/home/alice/run");
    assert_eq!(id, Identity::default());
    // Moab's <Requested> form too.
    let (r, _) = from_xml(
        "<?xml version=\"1.0\"?><job><InitialWorkingDirectory>/home/user/test/perlAPI</InitialWorkingDirectory><Executable>/home/user/test/perlAPI/script2.pbs.cmd</Executable><SubmitLanguage>PBS</SubmitLanguage><Requested><Feature>ppn2</Feature><Processors>3</Processors><WallclockDuration>3600</WallclockDuration></Requested><SubmitString>true</SubmitString></job>",
        &base(),
    )
    .unwrap();
    assert_eq!(r.resources, ["feature=ppn2,procs=3,walltime=3600"]);
    assert_eq!(r.workdir.as_deref(), Some("/home/user/test/perlAPI"));
    assert_eq!(
        r.script_path.as_deref(),
        Some("/home/user/test/perlAPI/script2.pbs.cmd")
    );
}

#[test]
fn garbage_is_refused_with_the_reason() {
    let e = |xml: &str| from_xml(xml, &base()).unwrap_err();
    assert!(e("").starts_with("invalid job XML:"));
    assert!(e("hello").starts_with("invalid job XML:"));
    assert!(e("<job><SubmitString>x</SubmitString>").starts_with("invalid job XML:"));
    assert_eq!(
        e("<Data/>"),
        "invalid job XML: the root element is <Data>, not <job>"
    );
    assert_eq!(
        e("<job></job>"),
        "invalid job XML: no <SubmitString> (the job's script)"
    );
    assert_eq!(
        e("<job><SubmitString>x</SubmitString><Walltime>1</Walltime></job>"),
        "invalid job XML: unknown element <Walltime>"
    );
    assert!(
        e("<job><SubmitString>x</SubmitString><Arguments>\\START\\zz</Arguments></job>")
            .contains("invalid escape")
    );
    assert!(
        e("<job><SubmitString>x</SubmitString><SubmitLanguage>LSF</SubmitLanguage></job>")
            .contains("'LSF' is not supported")
    );
    assert!(
        e("<job><Owner>a</Owner><UserId>b</UserId><SubmitString>x</SubmitString></job>")
            .contains("disagree")
    );
    assert!(e("<job><SubmitString>x</SubmitString><RequestedResources><Foo>1</Foo></RequestedResources></job>")
        .contains("unknown resource element <Foo>"));
    assert!(
        e("<job><SubmitString>x</SubmitString><Priority>high</Priority></job>")
            .contains("priority 'high'")
    );
    assert!(
        e("<job><SubmitString>x</SubmitString><Environment>novalue~rs;</Environment></job>")
            .contains("NAME=VALUE")
    );
    // Entities beyond XML's five are not expanded (no DTD).
    assert!(
        e("<!DOCTYPE job [<!ENTITY a \"aaaa\">]><job><SubmitString>&a;</SubmitString></job>")
            .starts_with("invalid job XML:")
    );
    let huge = format!(
        "<job><SubmitString>{}</SubmitString></job>",
        "x".repeat(MAX_XML_BYTES)
    );
    assert!(e(&huge).contains("too large"));
}

#[test]
fn the_command_line_wins_over_the_xml() {
    let (xml_req, _) = from_xml(&to_xml(&full(), "alice", "staff"), &base()).unwrap();
    let top = SubmitRequest {
        name: Some("renamed".into()),
        resources: vec!["walltime=5:00".into()],
        env: vec![("A".into(), "2".into()), ("B".into(), "3".into())],
        submit_args: "--xml job.xml -N renamed".into(),
        submit_host: "login2".into(),
        ..SubmitRequest::default()
    };
    let r = overlay(xml_req, &top);
    assert_eq!(r.name.as_deref(), Some("renamed"));
    assert_eq!(r.class.as_deref(), Some("batch"));
    assert_eq!(
        r.resources.last().map(String::as_str),
        Some("walltime=5:00")
    );
    assert_eq!(
        r.env,
        [
            ("A".to_string(), "2".to_string()),
            ("PATH".to_string(), "/bin:/usr/bin".to_string()),
            ("B".to_string(), "3".to_string())
        ]
    );
    assert_eq!(r.submit_host, "login2");
}

#[test]
fn node_specs_generic_resources_and_access_policies_survive_the_xml() {
    // A submit filter sees, and gives back, every placement request: Torque
    // node specifications with hosts and GPUs, generic resources, host
    // lists, node access policies, task request lists, reservation binding.
    let req = SubmitRequest {
        script: "sleep 1\n".into(),
        name: Some("STDIN".into()),
        resources: vec![
            "nodes=n1:ppn=2+2:ppn=4:gpus=1:fast,gres=matlab:2".into(),
            "naccesspolicy=singlejob,hostlist=n1+n2,tpn=2".into(),
            "trl=2@600:4@300".into(),
        ],
        extensions: vec![
            "x=GRES:gpu:2;NACCESSPOLICY:SINGLEUSER;HOSTLIST:n3+n4;FLAGS:ADVRES:r.1".into(),
        ],
        ..base()
    };
    let xml = to_xml(&req, "alice", "staff");
    assert!(
        xml.contains("<Nodes>n1:ppn=2+2:ppn=4:gpus=1:fast</Nodes>"),
        "{xml}"
    );
    assert!(
        xml.contains("<Resource Name=\"gres\">matlab:2</Resource>"),
        "{xml}"
    );
    assert!(
        xml.contains("<Resource Name=\"naccesspolicy\">singlejob</Resource>"),
        "{xml}"
    );
    let (back, _) = from_xml(&xml, &base()).unwrap();
    let mut want = req.clone();
    want.resources = vec![
        "nodes=n1:ppn=2+2:ppn=4:gpus=1:fast,gres=matlab:2,naccesspolicy=singlejob,hostlist=n1+n2,tpn=2,trl=2@600:4@300".into(),
    ];
    assert_eq!(back, want);
}

#[test]
fn umask_is_decimal_as_moab_writes_it_or_octal_with_a_leading_zero() {
    let ext = |xml: &str| from_xml(xml, &base()).map(|(r, _)| r.extensions);
    let job = |m: &str| format!("<job><SubmitString>true</SubmitString><UMask>{m}</UMask></job>");
    assert_eq!(ext(&job("18")).unwrap(), ["umask=022"]);
    assert_eq!(ext(&job("63")).unwrap(), ["umask=077"]);
    assert_eq!(ext(&job("0077")).unwrap(), ["umask=0077"]);
    assert_eq!(ext(&job("0")).unwrap(), ["umask=0"]);
    assert!(ext(&job("x")).unwrap_err().contains("<UMask>x</UMask>"));
}
