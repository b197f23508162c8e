complete -c runjob -s n -d 'Run on these nodes (comma or colon separated)' -r
complete -c runjob -s p -d 'Run in this partition' -r
complete -c runjob -l socket -d 'Unix socket of the moab daemon (default: $MOAB_SOCKET, else $MOABHOMEDIR/moab.sock, else ~/.arches/moab.sock if it exists, else the system service\'s /run/arches/moab.sock)' -r -F
complete -c runjob -l host -d 'Server host. Accepted for compatibility with Moab clients (`--host=<master>`); Arches clients always talk to the local socket' -r
complete -c runjob -l timeout -d 'Seconds to wait for the daemon\'s answer before failing with `ERROR:  client timed out after N seconds` (Moab\'s CLIENTTIMEOUT, default 30)' -r
complete -c runjob -s c -d 'Clear job parameters left by previous runs'
complete -c runjob -s f -d 'Force: ignore throttling policies'
complete -c runjob -s x -d 'Force: ignore policies, reservations and node state'
complete -c runjob -s h -l help -d 'Print help (see more with \'--help\')'
# Operands: jobs known to the running daemon.
complete -c runjob -f -n 'not string match -q -- "-*" (commandline -ct)' -a '(runjob --complete jobs 2>/dev/null)'
