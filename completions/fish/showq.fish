complete -c showq -s w -d 'Only jobs matching <attr>=<value>: user, group, acct, class, qos, partition, rsv; repeatable' -r
complete -c showq -s u -d 'Only jobs of this user' -r
complete -c showq -s p -d 'Only jobs of this partition: active and completed ones that ran there, eligible and blocked ones that may run there; the summary lines are the partition\'s' -r
complete -c showq -s R -d 'Only jobs that overlap this reservation in time and nodes (a job reservation: that job)' -r
complete -c showq -l format -d 'Output format: text, xml or json (case-insensitive, `--format=XML` works)' -r -f -a "text\t'Moab\'s human-readable text (the default)'
xml\t'Moab\'s one-line XML document (`<Data>...</Data>`), same as `--xml`'
json\t'The daemon\'s answer as JSON (the arches-api type; stable schema)'"
complete -c showq -l socket -d 'Unix socket of the moab daemon (default: $MOAB_SOCKET, else $MOABHOMEDIR/moab.sock, else ~/.arches/moab.sock if it exists, else the system service\'s /run/arches/moab.sock)' -r -F
complete -c showq -l host -d 'Server host. Accepted for compatibility with Moab clients (`--host=<master>`); Arches clients always talk to the local socket' -r
complete -c showq -l timeout -d 'Seconds to wait for the daemon\'s answer before failing with `ERROR:  client timed out after N seconds` (Moab\'s CLIENTTIMEOUT, default 30)' -r
complete -c showq -s b -d 'Show only blocked jobs'
complete -c showq -s c -d 'Show recently completed jobs (kept for JOBCPURGETIME)'
complete -c showq -s i -d 'Show eligible jobs in detail (priority, xfactor, class, queue time)'
complete -c showq -s r -d 'Show active jobs in detail (partition, xfactor, group, master host)'
complete -c showq -s v -d 'Verbose: local and full job ids (<id>/<scheduler>.<id>) and partitions; with -i the reservation start time; in XML the DRMJID of every job'
complete -c showq -s n -d 'Show job names under JOBID instead of job ids'
complete -c showq -s o -d 'Order active jobs by start time (earliest started first) instead of earliest completion'
complete -c showq -s s -d 'Accepted for compatibility with third-party tools (abipy passes `-s`); no effect'
complete -c showq -s g -d 'Grid job and system ids: Arches has no grid, so the ids shown are already the system ids'
complete -c showq -s l -d 'Local/remote view (grid): every Arches job is local; the report is unchanged'
complete -c showq -l blocking -d 'Answer without the client-side cache: Arches always answers from the scheduler\'s last published state (there is no cache), so the report is the same'
complete -c showq -l noblock -d 'Accepted for compatibility (Rocoto); the daemon always answers without blocking'
complete -c showq -s t -l expand-arrays -d 'Every sub-job of a job array on its own line (`ID[INDEX]`, as Torque\'s qstat -t); by default the queued sub-jobs of an array in the same state share one line `ID[INDEXES]`'
complete -c showq -l xml -d 'Print Moab\'s XML document instead of text'
complete -c showq -s h -l help -d 'Print help (see more with \'--help\')'
