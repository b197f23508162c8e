complete -c checknode -l format -d 'Output format: text, xml or json (case-insensitive, `--format=XML` works)' -r -f -a "text\t'Moab\'s human-readable text (the default)'
xml\t'Moab\'s one-line XML document (`<Data>...</Data>`), same as `--xml`'
json\t'The daemon\'s answer as JSON (the arches-api type; stable schema)'"
complete -c checknode -l socket -d 'Unix socket of the moab daemon (default: $MOAB_SOCKET, else $MOABHOMEDIR/moab.sock, else ~/.arches/moab.sock if it exists, else the system service\'s /run/arches/moab.sock)' -r -F
complete -c checknode -l host -d 'Server host. Accepted for compatibility with Moab clients (`--host=<master>`); Arches clients always talk to the local socket' -r
complete -c checknode -l timeout -d 'Seconds to wait for the daemon\'s answer before failing with `ERROR:  client timed out after N seconds` (Moab\'s CLIENTTIMEOUT, default 30)' -r
complete -c checknode -s v -d 'Verbose; give twice for more detail'
complete -c checknode -l xml -d 'Print Moab\'s XML document instead of text'
complete -c checknode -s h -l help -d 'Print help (see more with \'--help\')'
# Operands: nodes known to the running daemon.
complete -c checknode -f -n 'not string match -q -- "-*" (commandline -ct)' -a '(checknode --complete nodes 2>/dev/null)'
