complete -c mshow -s p -d 'VPC profile: not supported (Arches has no VPCs)' -r
complete -c mshow -s q -d 'Show the job queue: not supported (use showq)' -r
complete -c mshow -s w -d 'A requirement: ATTR=VALUE[,ATTR=VALUE]...' -r
complete -c mshow -l flags -d 'Flags: future (also later windows), tid (a transaction id per row, for mrsvctl -c -R); policy, summary, timeflex and verbose are not supported' -r
complete -c mshow -l format -d 'Output format: text, xml or json (case-insensitive, `--format=XML` works)' -r -f -a "text\t'Moab\'s human-readable text (the default)'
xml\t'Moab\'s one-line XML document (`<Data>...</Data>`), same as `--xml`'
json\t'The daemon\'s answer as JSON (the arches-api type; stable schema)'"
complete -c mshow -l socket -d 'Unix socket of the moab daemon (default: $MOAB_SOCKET, else $MOABHOMEDIR/moab.sock, else ~/.arches/moab.sock if it exists, else the system service\'s /run/arches/moab.sock)' -r -F
complete -c mshow -l host -d 'Server host. Accepted for compatibility with Moab clients (`--host=<master>`); Arches clients always talk to the local socket' -r
complete -c mshow -l timeout -d 'Seconds to wait for the daemon\'s answer before failing with `ERROR:  client timed out after N seconds` (Moab\'s CLIENTTIMEOUT, default 30)' -r
complete -c mshow -s a -d 'Show available resources'
complete -c mshow -s i -d 'Intersection of several requirements (with one requirement there is nothing to intersect)'
complete -c mshow -s o -d 'Do not aggregate the results of several requirements (one requirement: nothing to aggregate)'
complete -c mshow -s x -d 'Several requirements on distinct nodes (one requirement: nothing to keep apart)'
complete -c mshow -s T -d 'Time-lock several requirements: not supported (one requirement per query)'
complete -c mshow -l xml -d 'Print Moab\'s XML document instead of text'
complete -c mshow -s h -l help -d 'Print help (see more with \'--help\')'
