complete -c showstart -s e -d 'Estimation method: rsv (default), prio, hist or all' -r -f -a "all\t''
hist\t''
prio\t''
rsv\t''"
complete -c showstart -s l -d 'Extra limits of a hypothetical job: qos=<QOS>' -r
complete -c showstart -l format -d 'Output format: text, xml or json (case-insensitive, `--format=XML` works)' -r -f -a "text\t'Moab\'s human-readable text (the default)'
xml\t'Moab\'s one-line XML document (`<Data>...</Data>`), same as `--xml`'
json\t'The daemon\'s answer as JSON (the arches-api type; stable schema)'"
complete -c showstart -l socket -d 'Unix socket of the moab daemon (default: $MOAB_SOCKET, else $MOABHOMEDIR/moab.sock, else ~/.arches/moab.sock if it exists, else the system service\'s /run/arches/moab.sock)' -r -F
complete -c showstart -l host -d 'Server host. Accepted for compatibility with Moab clients (`--host=<master>`); Arches clients always talk to the local socket' -r
complete -c showstart -l timeout -d 'Seconds to wait for the daemon\'s answer before failing with `ERROR:  client timed out after N seconds` (Moab\'s CLIENTTIMEOUT, default 30)' -r
complete -c showstart -s f -d 'Use feedback: scale the wait until the reservation-based start by the average wall-clock accuracy (run time / limit) of the statistics period\'s completed jobs'
complete -c showstart -l xml -d 'Print Moab\'s XML document instead of text'
complete -c showstart -s h -l help -d 'Print help (see more with \'--help\')'
# Operands: jobs known to the running daemon.
complete -c showstart -f -n 'not string match -q -- "-*" (commandline -ct)' -a '(showstart --complete jobs 2>/dev/null)'
