complete -c showbf -s a -d 'Only for this account' -r
complete -c showbf -s c -d 'Class (queue) the job would use' -r
complete -c showbf -s d -d 'Minimum duration the resources must stay free (`[[[DD:]HH:]MM:]SS`)' -r
complete -c showbf -s f -d 'Required node features (colon separated)' -r
complete -c showbf -s g -d 'Only for this group' -r
complete -c showbf -s m -d 'Node memory comparison, e.g. \'>=256\' (MB)' -r
complete -c showbf -s n -d 'Only windows with at least this many nodes' -r
complete -c showbf -s p -d 'Only this partition' -r
complete -c showbf -s q -d 'QOS the job would run under' -r
complete -c showbf -s u -d 'Only for this user' -r
complete -c showbf -l gres -d 'Windows of this generic resource instead of processors (Arches): Tasks counts free units (e.g. GPUs) of nodes with a free processor' -r
complete -c showbf -l format -d 'Output format: text, xml or json (case-insensitive, `--format=XML` works)' -r -f -a "text\t'Moab\'s human-readable text (the default)'
xml\t'Moab\'s one-line XML document (`<Data>...</Data>`), same as `--xml`'
json\t'The daemon\'s answer as JSON (the arches-api type; stable schema)'"
complete -c showbf -l socket -d 'Unix socket of the moab daemon (default: $MOAB_SOCKET, else $MOABHOMEDIR/moab.sock, else ~/.arches/moab.sock if it exists, else the system service\'s /run/arches/moab.sock)' -r -F
complete -c showbf -l host -d 'Server host. Accepted for compatibility with Moab clients (`--host=<master>`); Arches clients always talk to the local socket' -r
complete -c showbf -l timeout -d 'Seconds to wait for the daemon\'s answer before failing with `ERROR:  client timed out after N seconds` (Moab\'s CLIENTTIMEOUT, default 30)' -r
complete -c showbf -s A -d 'Show availability for all users, groups and accounts (every reservation counts as free)'
complete -c showbf -s v -d 'Verbose: each window\'s nodes and processors (HostList=node:procs,...)'
complete -c showbf -s D -d 'Current and future availability: also the windows that open later (when running jobs end or reservations expire), with their start offset and date'
complete -c showbf -s L -d 'Enforce hard limits: cut windows to what the credentials\' hard MAXPROC/MAXNODE/MAXJOB (USERCFG, GROUPCFG, ACCOUNTCFG, CLASSCFG, QOSCFG) still allow'
complete -c showbf -l xml -d 'Print Moab\'s XML document instead of text'
complete -c showbf -s h -l help -d 'Print help (see more with \'--help\')'
