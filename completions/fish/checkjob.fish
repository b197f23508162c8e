complete -c checkjob -s l -d 'Policy level of the eligibility evaluation (HARD, SOFT or OFF; Arches evaluates soft and hard limits in one pass and reports that)' -r
complete -c checkjob -s n -d 'Check whether the job could use this node, and the preemption status of the jobs on it' -r
complete -c checkjob -s q -d 'Check access to these QoS (comma list)' -r
complete -c checkjob -s r -d 'Check access to these reservations (comma list)' -r
complete -c checkjob -l flags -d 'future: accepted (the report is the scheduler\'s own evaluation, which already plans ahead)' -r
complete -c checkjob -l format -d 'Output format: text, xml or json (case-insensitive, `--format=XML` works)' -r -f -a "text\t'Moab\'s human-readable text (the default)'
xml\t'Moab\'s one-line XML document (`<Data>...</Data>`), same as `--xml`'
json\t'The daemon\'s answer as JSON (the arches-api type; stable schema)'"
complete -c checkjob -l socket -d 'Unix socket of the moab daemon (default: $MOAB_SOCKET, else $MOABHOMEDIR/moab.sock, else ~/.arches/moab.sock if it exists, else the system service\'s /run/arches/moab.sock)' -r -F
complete -c checkjob -l host -d 'Server host. Accepted for compatibility with Moab clients (`--host=<master>`); Arches clients always talk to the local socket' -r
complete -c checkjob -l timeout -d 'Seconds to wait for the daemon\'s answer before failing with `ERROR:  client timed out after N seconds` (Moab\'s CLIENTTIMEOUT, default 30)' -r
complete -c checkjob -s v -d 'Verbose; give twice (-v -v or -vv) for more detail'
complete -c checkjob -s A -d 'Parsable output: one line of ATTRIBUTE=VALUE; pairs per job (Moab\'s names: NAME, STATE, UNAME, GNAME, ACCOUNT, RCLASS, WCLIMIT, QUEUETIME, STARTTIME, TASKS, NODES, then Arches\' JOBNAME, QOS, PROCS, PRIORITY, ...). STARTTIME of a queued job is its estimated start (0: none)'
complete -c checkjob -l xml -d 'Print Moab\'s XML document instead of text'
complete -c checkjob -s h -l help -d 'Print help (see more with \'--help\')'
# Operands: jobs known to the running daemon.
complete -c checkjob -f -n 'not string match -q -- "-*" (commandline -ct)' -a '(checkjob --complete jobs 2>/dev/null)'
