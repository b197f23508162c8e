complete -c mschedctl -s r -d 'Resume scheduling, now or after SECONDS' -r
complete -c mschedctl -s s -d 'Stop scheduling at iteration N (default: the end of the current one)' -r
complete -c mschedctl -s S -d 'Step N scheduling iterations (default 1), then stop' -r
complete -c mschedctl -s m -d 'Modify: `-m config "PARAMETER VALUE"`' -r
complete -c mschedctl -s l -d 'List: `-l config`' -r
complete -c mschedctl -s f -d 'Flush (reset) statistics: all (default), usage, fairshare or estimates' -r
complete -c mschedctl -s A -d 'Annotate: record MESSAGE in the daemon\'s log' -r
complete -c mschedctl -s L -d 'Change the daemon\'s log level (0-9, default 7) at run time' -r
complete -c mschedctl -s R -d 'Recycle (restart) the daemon: not supported, restart it with the service manager' -r
complete -c mschedctl -s c -d 'Create a message, trigger or VPC: not supported (Arches has none of them)' -r
complete -c mschedctl -s d -d 'Destroy a message, trigger or VPC: not supported (Arches has none of them)' -r
complete -c mschedctl -l format -d 'Output format: text, xml or json (case-insensitive, `--format=XML` works)' -r -f -a "text\t'Moab\'s human-readable text (the default)'
xml\t'Moab\'s one-line XML document (`<Data>...</Data>`), same as `--xml`'
json\t'The daemon\'s answer as JSON (the arches-api type; stable schema)'"
complete -c mschedctl -l socket -d 'Unix socket of the moab daemon (default: $MOAB_SOCKET, else $MOABHOMEDIR/moab.sock, else ~/.arches/moab.sock if it exists, else the system service\'s /run/arches/moab.sock)' -r -F
complete -c mschedctl -l host -d 'Server host. Accepted for compatibility with Moab clients (`--host=<master>`); Arches clients always talk to the local socket' -r
complete -c mschedctl -l timeout -d 'Seconds to wait for the daemon\'s answer before failing with `ERROR:  client timed out after N seconds` (Moab\'s CLIENTTIMEOUT, default 30)' -r
complete -c mschedctl -s k -d 'Kill: stop scheduling and exit'
complete -c mschedctl -s p -d 'Pause scheduling; cluster and workload state keep being updated'
complete -c mschedctl -s e -d 'With -m: only evaluate the change, do not apply it'
complete -c mschedctl -s n -d 'Write a resource trace: not supported (use \'mdiag -n --format=json\')'
complete -c mschedctl -l xml -d 'Print Moab\'s XML document instead of text'
complete -c mschedctl -s h -l help -d 'Print help (see more with \'--help\')'
