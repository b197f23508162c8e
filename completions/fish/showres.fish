complete -c showres -l format -d 'Output format: text, xml or json (case-insensitive, `--format=XML` works)' -r -f -a "text\t'Moab\'s human-readable text (the default)'
xml\t'Moab\'s one-line XML document (`<Data>...</Data>`), same as `--xml`'
json\t'The daemon\'s answer as JSON (the arches-api type; stable schema)'"
complete -c showres -l socket -d 'Unix socket of the moab daemon (default: $MOAB_SOCKET, else $MOABHOMEDIR/moab.sock, else ~/.arches/moab.sock if it exists, else the system service\'s /run/arches/moab.sock)' -r -F
complete -c showres -l host -d 'Server host. Accepted for compatibility with Moab clients (`--host=<master>`); Arches clients always talk to the local socket' -r
complete -c showres -l timeout -d 'Seconds to wait for the daemon\'s answer before failing with `ERROR:  client timed out after N seconds` (Moab\'s CLIENTTIMEOUT, default 30)' -r
complete -c showres -s n -d 'Per-node view of reserved nodes'
complete -c showres -s f -d 'Show free (unreserved) processors per node instead of reservations'
complete -c showres -s g -d 'With -n: grep-able output (the node name is on every line, which Arches always does)'
complete -c showres -s o -d 'Reservations that overlap RSVID in time and nodes'
complete -c showres -s r -d 'Relative time mode (Start/End are already relative to now; accepted)'
complete -c showres -s v -d 'Verbose: start dates with the year; with -n and RSVID, every reservation on RSVID\'s nodes'
complete -c showres -l xml -d 'Print Moab\'s XML document instead of text'
complete -c showres -s h -l help -d 'Print help (see more with \'--help\')'
# Operands: reservations known to the running daemon.
complete -c showres -f -n 'not string match -q -- "-*" (commandline -ct)' -a '(showres --complete reservations 2>/dev/null)'
