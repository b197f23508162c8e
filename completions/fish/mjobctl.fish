complete -c mjobctl -s n -d 'Select the jobs named JOBNAME (with any operation; adds to JOBEXP)' -r
complete -c mjobctl -s h -d 'Set a hold: user (default), system, batch or defer' -r
complete -c mjobctl -s m -d 'Modify an attribute: ATTR=VAL, ATTR+=VAL or ATTR-=VAL (repeatable)' -r
complete -c mjobctl -s N -d 'Send a signal: [signal=]SIGNO|SIGNAME' -r
complete -c mjobctl -s p -d 'Set the system priority (0 clears it; +N adds to the maximum; with --flags=relative adds to the computed priority)' -r
complete -c mjobctl -s q -d 'Query: diag (job details), starttime (start estimate), hostlist (allocated hosts) or wiki (each job as one line of Moab\'s WIKI protocol: <id> ATTR=VALUE;...)' -r -f -a "diag\t''
starttime\t''
hostlist\t''
wiki\t''"
complete -c mjobctl -s u -d 'Release holds: all (default), user, system, batch or defer (comma list)' -r
complete -c mjobctl -s w -d 'Select jobs where ATTR=VALUE (user, group, account, class, qos, state, partition, jobname; CompletionTime/StartTime/SubmitTime{<,<=,=,>=,>}EPOCH); with -x also flags=ignorepolicies or flags=ignorersv. Repeatable; every constraint must hold' -r
complete -c mjobctl -l flags -d 'Flags: relative (with -p), completed (with -q diag)' -r
complete -c mjobctl -l format -d 'Output format: text, xml or json (case-insensitive, `--format=XML` works)' -r -f -a "text\t'Moab\'s human-readable text (the default)'
xml\t'Moab\'s one-line XML document (`<Data>...</Data>`), same as `--xml`'
json\t'The daemon\'s answer as JSON (the arches-api type; stable schema)'"
complete -c mjobctl -l socket -d 'Unix socket of the moab daemon (default: $MOAB_SOCKET, else $MOABHOMEDIR/moab.sock, else ~/.arches/moab.sock if it exists, else the system service\'s /run/arches/moab.sock)' -r -F
complete -c mjobctl -l host -d 'Server host. Accepted for compatibility with Moab clients (`--host=<master>`); Arches clients always talk to the local socket' -r
complete -c mjobctl -l timeout -d 'Seconds to wait for the daemon\'s answer before failing with `ERROR:  client timed out after N seconds` (Moab\'s CLIENTTIMEOUT, default 30)' -r
complete -c mjobctl -l help -d 'Print help'
complete -c mjobctl -s c -d 'Cancel the jobs'
complete -c mjobctl -s F -d 'Force-cancel the jobs (Arches\' cancel already kills the job\'s processes: same as -c)'
complete -c mjobctl -s S -d 'Submit a job held in an internal queue: Arches has none (every job is queued by msub), so this reports that'
complete -c mjobctl -s C -d 'Checkpoint the jobs'
complete -c mjobctl -s r -d 'Resume suspended jobs'
complete -c mjobctl -s R -d 'Requeue active jobs (or queue completed ones again)'
complete -c mjobctl -s s -d 'Suspend active jobs'
complete -c mjobctl -s x -d 'Force the jobs to start now (admin)'
complete -c mjobctl -l xml -d 'Print Moab\'s XML document instead of text'
# Operands: jobs known to the running daemon.
complete -c mjobctl -f -n 'not string match -q -- "-*" (commandline -ct)' -a '(mjobctl --complete jobs 2>/dev/null)'
