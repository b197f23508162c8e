complete -c mdiag -s a -d 'Accounts (optionally one)' -r
complete -c mdiag -s l -d 'With -b: the policy level shown in the header (HARD, SOFT or OFF)' -r
complete -c mdiag -s o -d 'With -f: organise by object type: `acct` nests each account\'s users under it (their share of the total usage, or with --flags=relative of the account\'s); `user` is the flat report' -r
complete -c mdiag -l flags -d 'With -f -o acct: `relative` shows each user\'s share of its account\'s usage' -r
complete -c mdiag -s G -d 'Power management (Arches manages no node power: says so)' -r
complete -c mdiag -s T -d 'Triggers (Arches has no triggers: prints an empty table)' -r
complete -c mdiag -s s -d 'Standing reservations (SRCFG), optionally one' -r
complete -c mdiag -s c -d 'Classes/queues (optionally one)' -r
complete -c mdiag -s C -d 'Check a configuration file (default $MOABHOMEDIR/moab.cfg, else ~/.arches/moab.cfg, else the service\'s /etc/arches/moab.cfg) without a daemon; exit 1 on errors' -r
complete -c mdiag -s g -d 'Groups (optionally one)' -r
complete -c mdiag -s j -d 'Jobs (optionally one); --xml gives the checkjob job XML' -r
complete -c mdiag -s n -d 'Nodes (optionally one); --xml gives <node> elements' -r
complete -c mdiag -s q -d 'Quality of service (optionally one)' -r
complete -c mdiag -s r -d 'Reservations (optionally one)' -r
complete -c mdiag -s R -d 'Resource managers (optionally one): type, state, nodes reported' -r
complete -c mdiag -s t -d 'Partitions: nodes, processors and memory configured, up, dedicated and active; with -n, -j, -p or -b, restrict that report to this partition' -r
complete -c mdiag -s u -d 'Users (optionally one)' -r
complete -c mdiag -s w -d 'With -j: completed=true (completed jobs only), ALL=true (completed ones too), system=true, and mjobctl\'s job constraints (user=, group=, account=, class=, qos=, state=, partition=...)' -r
complete -c mdiag -l format -d 'Output format: text, xml or json (case-insensitive, `--format=XML` works)' -r -f -a "text\t'Moab\'s human-readable text (the default)'
xml\t'Moab\'s one-line XML document (`<Data>...</Data>`), same as `--xml`'
json\t'The daemon\'s answer as JSON (the arches-api type; stable schema)'"
complete -c mdiag -l socket -d 'Unix socket of the moab daemon (default: $MOAB_SOCKET, else $MOABHOMEDIR/moab.sock, else ~/.arches/moab.sock if it exists, else the system service\'s /run/arches/moab.sock)' -r -F
complete -c mdiag -l host -d 'Server host. Accepted for compatibility with Moab clients (`--host=<master>`); Arches clients always talk to the local socket' -r
complete -c mdiag -l timeout -d 'Seconds to wait for the daemon\'s answer before failing with `ERROR:  client timed out after N seconds` (Moab\'s CLIENTTIMEOUT, default 30)' -r
complete -c mdiag -s b -d 'Jobs blocked by holds, policies or dependencies'
complete -c mdiag -s f -d 'Fairshare usage per credential and interval (FSPOLICY, FSDEPTH, FSINTERVAL, FSDECAY, FSTARGET), then the share tree (FSTREE) when one is configured'
complete -c mdiag -s L -d 'Usage limits: every credential limit with its current usage'
complete -c mdiag -s x -d 'Overall consistency check: job and configuration warnings'
complete -c mdiag -s p -d 'Job priority breakdown per component of the eligible jobs (-v adds running jobs, -v -v every job; --xml)'
complete -c mdiag -s S -d 'The scheduler: host, mode, iterations, messages'
complete -c mdiag -s v -d 'Verbose; repeat for more'
complete -c mdiag -l xml -d 'Print Moab\'s XML document instead of text'
complete -c mdiag -s h -l help -d 'Print help (see more with \'--help\')'
