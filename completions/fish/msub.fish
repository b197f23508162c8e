complete -c msub -s a -d 'Job is not eligible before this time: [[[[CC]YY]MM]DD]hhmm[.SS]' -r
complete -c msub -s A -d 'Account to charge' -r
complete -c msub -s c -d 'Checkpoint interval: n, s, c or c=<minutes> (passed to the daemon as checkpoint=...)' -r
complete -c msub -s C -d 'Directive prefix to look for instead of #PBS/#MSUB/#MOAB; \'\' disables directives' -r
complete -c msub -s d -d 'Working directory of the job (relative paths are resolved against the current directory); default: the directory msub runs in (PBS_O_WORKDIR). The job sees PBS_O_INITDIR when -d is given' -r
complete -c msub -s e -d 'Standard error path: [host:]path (file or directory)' -r
complete -c msub -s F -d 'Arguments for the script, as one shell-quoted string: -F "a \'b c\'"' -r
complete -c msub -s j -d 'Join streams: oe merges both into the output file, eo into the error file, n keeps them apart' -r
complete -c msub -s k -d 'Keep streams on the execution host: e, o, eo, oe or n (passed as keep_files=...)' -r
complete -c msub -s l -d 'Resource list, e.g. nodes=2:ppn=4,walltime=1:00:00 (repeatable, -lname=value works; for the same resource the last one wins, and the command line wins over directives; nodes= and select= are one resource); template=NAME requests a job template (JOBCFG[NAME] SELECT=TRUE); procs=MIN-MAX makes a malleable job (it starts on MIN processors and may grow to MAX); deadline=HH:MM[:SS][_MO/DD[/YY]] or deadline=+DURATION (after submission) asks the job to complete by then: guaranteed with a reservation when its QoS has QFLAGS=DEADLINE (DEADLINEPOLICY decides if it cannot be met), otherwise kept for the priority (DEADLINEWEIGHT) with a warning' -r
complete -c msub -s m -d 'Mail options: n, or any of a (abort), b (begin), e (end)' -r
complete -c msub -s M -d 'Mail recipients: user[@host][,...]' -r
complete -c msub -s N -d 'Job name (default: the script\'s file name, or STDIN)' -r
complete -c msub -s o -d 'Standard output path: [host:]path (file or directory)' -r
complete -c msub -s p -d 'User priority (-1024..0; positive values need ENABLEPOSUSERPRIORITY)' -r
complete -c msub -s q -d 'Destination class/queue: [queue][@server]' -r
complete -c msub -s r -d 'Rerunable: y or n' -r
complete -c msub -s t -d 'Job array: [NAME][INDEXES][%LIMIT], e.g. 1-100, myarray[1-100]%5, 1-9:2, 1,5,7' -r
complete -c msub -s S -d 'Shell of the job: path[@host][,...]' -r
complete -c msub -s u -d 'Users the job may run as: user[@host][,...] (passed as user_list=...)' -r
complete -c msub -s v -d 'Variables to export: VAR[=value][,VAR...] (a bare VAR takes its current value)' -r
complete -c msub -s W -d 'Additional attributes, e.g. x=FLAGS:RESTARTABLE, depend=afterok:12 or umask=077 (the job\'s file-creation mask, octal) (repeatable)' -r
complete -c msub -l format -d 'Output format; xml is the same as --xml' -r
complete -c msub -l socket -d 'Unix socket of the moab daemon (default: $MOAB_SOCKET, else $MOABHOMEDIR/moab.sock, else ~/.arches/moab.sock if it exists, else the system service\'s /run/arches/moab.sock)' -r -F
complete -c msub -l host -d 'Server host. Accepted for compatibility with Moab clients (`--host=<master>`); Arches clients always talk to the local socket' -r
complete -c msub -l timeout -d 'Seconds to wait for the daemon\'s answer before failing with `ERROR:  client timed out after N seconds` (Moab\'s CLIENTTIMEOUT, default 30)' -r
complete -c msub -s E -d 'Add the MOAB_* variables to the job\'s environment (accepted for compatibility: Arches always sets MOAB_JOBID, MOAB_NODELIST, ...)'
complete -c msub -s h -d 'Submit with a user hold'
complete -c msub -s I -d 'Interactive job: wait for the allocation, then run a shell (or, with -x, the script) on a terminal on its first node; the job ends when the shell exits (msub exits with its status)'
complete -c msub -s x -d 'With -I: run the script on the job\'s terminal instead of a shell (without -x an interactive job\'s script is read only for its directives)'
complete -c msub -s X -d 'X11 forwarding (not supported: refused)'
complete -c msub -s K -d 'Wait until the job completes, then print `Job <id> completed`'
complete -c msub -s V -d 'Export the whole current environment'
complete -c msub -s z -d 'Silent: do not print the job id'
complete -c msub -l xml -d 'Print the answer as `<Data><job JobID="..."/></Data>`'
complete -c msub -l help -d 'Print help'
