complete -c mrsvctl -s r -d 'Release (delete) a reservation' -r
complete -c mrsvctl -s q -d 'Show a reservation (or ALL) in detail, as mdiag -r' -r
complete -c mrsvctl -s e -d 'With -c: end time (same forms as -s)' -r
complete -c mrsvctl -s n -d 'With -c: reservation name (id) instead of system.N' -r
complete -c mrsvctl -s a -d 'With -c: access list, e.g. USER==john (users=john also accepted)' -r
complete -c mrsvctl -s d -d 'With -c: duration `[[[DD:]HH:]MM:]SS`' -r
complete -c mrsvctl -s h -d 'With -c: host list (comma separated)' -r
complete -c mrsvctl -s s -d 'With -c: start time (`[HH[:MM[:SS]]][_MO[/DD[/YY]]]` or +offset)' -r
complete -c mrsvctl -s t -d 'With -c: processor count' -r
complete -c mrsvctl -l format -d 'Output format: text, xml or json (case-insensitive, `--format=XML` works)' -r -f -a "text\t'Moab\'s human-readable text (the default)'
xml\t'Moab\'s one-line XML document (`<Data>...</Data>`), same as `--xml`'
json\t'The daemon\'s answer as JSON (the arches-api type; stable schema)'"
complete -c mrsvctl -l socket -d 'Unix socket of the moab daemon (default: $MOAB_SOCKET, else $MOABHOMEDIR/moab.sock, else ~/.arches/moab.sock if it exists, else the system service\'s /run/arches/moab.sock)' -r -F
complete -c mrsvctl -l host -d 'Server host. Accepted for compatibility with Moab clients (`--host=<master>`); Arches clients always talk to the local socket' -r
complete -c mrsvctl -l timeout -d 'Seconds to wait for the daemon\'s answer before failing with `ERROR:  client timed out after N seconds` (Moab\'s CLIENTTIMEOUT, default 30)' -r
complete -c mrsvctl -l help -d 'Print help'
complete -c mrsvctl -s c -d 'Create a reservation'
complete -c mrsvctl -l xml -d 'Print Moab\'s XML document instead of text'
