# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_moab_global_optspecs
    string join \n config= socket= home= salvage h/help V/version
end

function __fish_moab_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_moab_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_moab_using_subcommand
    set -l cmd (__fish_moab_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c moab -n "__fish_moab_needs_command" -l config -d 'Configuration file (default: <home>/moab.cfg; without one the embedded default applies)' -r -F
complete -c moab -n "__fish_moab_needs_command" -l socket -d 'Socket path (default: MOAB_SOCKET, else <home>/moab.sock)' -r -F
complete -c moab -n "__fish_moab_needs_command" -l home -d 'Home directory (default: MOABHOMEDIR, else ~/.arches)' -r -F
complete -c moab -n "__fish_moab_needs_command" -l salvage -d 'Start even though stored records cannot be read (each is set aside in the set_aside table of arches.db, kept and reported, never deleted) or the resource manager runs jobs the state does not know (a lost or replaced arches.db: they are left running, and their ids are never handed out again). Without it the daemon refuses to start in both cases and says why'
complete -c moab -n "__fish_moab_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c moab -n "__fish_moab_needs_command" -s V -l version -d 'Print version'
complete -c moab -n "__fish_moab_needs_command" -f -a "simulate" -d 'Replay a workload (SWF trace or JSONL) through the real scheduling engine with a virtual clock, as fast as the CPU allows, and report wait times, bounded slowdown, utilisation and backfill statistics'
complete -c moab -n "__fish_moab_using_subcommand simulate" -l trace -d 'SWF trace to replay (plain or gzip; see SWF TRACES)' -r -F
complete -c moab -n "__fish_moab_using_subcommand simulate" -l workload -d 'JSONL workload to replay (one job per line; see JSONL WORKLOADS)' -r -F
complete -c moab -n "__fish_moab_using_subcommand simulate" -l procs -d 'Machine size in processors (default: the --config nodes, else the trace header\'s MaxProcs, else MaxNodes). With --generate: the machine the workload is generated for (required, at least 2)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l procs-per-node -d 'Processors per node (default: one node holding every processor, the flat pool of trace simulators such as pyss; the last node takes the remainder)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l config -d 'moab.cfg to take the policy and the nodes (NODECFG) from; the options below override it. Errors in it stop the simulation (exit status 2), warnings are printed' -r -F
complete -c moab -n "__fish_moab_using_subcommand simulate" -l backfill -d 'BACKFILLPOLICY: FIRSTFIT (default), BESTFIT, GREEDY, NONE (no backfill: FCFS)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l reservation-depth -d 'RESERVATIONDEPTH: how many queued jobs get a reservation (default 1: EASY backfill); `all` reserves for every queued job (conservative backfill)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l reservation-policy -d 'RESERVATIONPOLICY: CURRENTHIGHEST (default: reservations recomputed every iteration), HIGHEST (kept and only compressed: pyss\'s conservative backfill with `--reservation-depth all`), NEVER' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l runtime-prediction -d 'RUNTIMEPREDICTION: NONE (plan with the walltimes) or USERMEAN2 (plan with the mean of the user\'s last two run times, extended stepwise when a job outlives it; the walltime stays the kill limit). Default: the --config value, else NONE' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l bf-order -d 'BFORDER: PRIORITY (default), SHORTESTPREDICTEDFIRST (SJBF: backfill candidates shortest planning duration first) or WIDESTWINDOWFIRST (FIRSTFIT traverses the backfill windows widest first). Default: the --config value, else PRIORITY' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l prediction-correction -d 'PREDICTIONCORRECTION, with USERMEAN2: STEPWISE (default: an expired prediction is extended by 1, 5, 15, 30 minutes, 1, 2, 5, 10, 20, 50, 100 hours past the elapsed time) or WALLTIME (the job is planned with its walltime from then on, as pyss\'s EASY++). Default: the --config value, else STEPWISE' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l prediction-scope -d 'PREDICTIONSCOPE, with USERMEAN2: ALL (default: running and queued jobs are planned with their prediction) or RUNNING (queued jobs keep their walltime for reservations and backfill, so no backfilled job can delay a reservation; predictions still order candidates under SHORTESTPREDICTEDFIRST). Default: the --config value, else ALL' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l prediction-guard -d 'PREDICTIONGUARD, with USERMEAN2: once a job holding a reservation has waited this long ([[[DD:]HH:]MM:]SS; 0 = off), the iteration is planned with walltimes as EASY is, so no prediction can delay it further. Default: the --config value, else off' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l summary -d 'Where to write the summary JSON (`-` = standard output; see OUTPUTS)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l summary-format -d 'The summary\'s format: json (default, every figure; see OUTPUTS) or table (the main figures as a table for people, durations as 1h 30m)' -r -f -a "json\t''
table\t''"
complete -c moab -n "__fish_moab_using_subcommand simulate" -l compare -d 'Compare the summaries (JSON files written by --summary) of earlier runs side by side in a table, one column per file, and exit' -r -F
complete -c moab -n "__fish_moab_using_subcommand simulate" -l jobs-csv -d 'Write one CSV line per job here (times in seconds after the trace start)' -r -F
complete -c moab -n "__fish_moab_using_subcommand simulate" -l min-job-id -d 'Keep only jobs numbered at least N (KTH-SP2\'s cleaned log: 15)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l report -d 'Write a self-contained HTML report (SVG charts) here' -r -F
complete -c moab -n "__fish_moab_using_subcommand simulate" -l until -d 'Stop the clock T after the trace start (time 0 of its submit times; T in seconds, [[DD:]HH:]MM:SS or a duration such as 30d or 2h 30m); without --serve the summary describes the jobs finished by then' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l start-epoch -d 'Unix time (seconds since 1970) of the workload\'s time 0, for the dates a served simulation shows and for calendar-bound policies (SRCFG standing reservations). Default: the SWF header\'s UnixStartTime, else 0' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l gantt-from -d '--report: start of the Gantt chart\'s window after the trace start (seconds, [[DD:]HH:]MM:SS or 2h 30m; default: 80 jobs around the middle of the replay; with only --gantt-to: from the first submission)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l gantt-to -d '--report: end of the Gantt chart\'s window after the trace start (same forms as --gantt-from; with only --gantt-from: to the last job\'s end). The chart shows every job waiting or running in the window, at most 500' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l socket -d 'Socket for --serve (default: MOAB_SOCKET, else <home>/moab.sock)' -r -F
complete -c moab -n "__fish_moab_using_subcommand simulate" -l generate -d 'Write a synthetic Lublin & Feitelson workload to this SWF file and exit (see GENERATOR; needs --procs)' -r -F
complete -c moab -n "__fish_moab_using_subcommand simulate" -l gen-jobs -d 'Generator: number of jobs' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l seed -d 'Generator: seed of the pseudo-random generator (same seed, same file)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l target-load -d 'Generator: target offered load, sum of run time x processors / (machine processors x last arrival); > 0 (above 1 overloads the machine)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l staging -d 'Data staging model for the jobs\' stage-in (JSONL `stagein` files, `stagein_size` MB or `stagein` seconds, else --stage-size): SELF (the job stages its own data on its nodes), LOOSE or TIGHT (DATASTAGEMODEL, the daemon\'s staging decisions on a modelled storage). Prints the allocated node-hours idle waiting for data' -r -f -a "SELF\t'The job stages its own data while holding its nodes'
LOOSE\t'Scheduler-initiated in priority order; no reservation until ready'
TIGHT\t'Scheduler-initiated; compute reserved from the data-ready time'"
complete -c moab -n "__fish_moab_using_subcommand simulate" -l stage-rate -d '--staging: transfer rate of one staging operation, in KB/s' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l stage-maxdsop -d '--staging: most staging operations at once (MAXDSOP)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l stage-size -d '--staging: stage-in size, in MB, of every job without its own' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l stage-disk -d '--staging: disk of the storage manager (MB; default unlimited)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l stage-target -d '--staging: share of --stage-disk staged data may fill (TARGETUSAGE, percent)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l sweep -d 'Replay the input once per configuration, in parallel on every core, and compare them in one table (see SWEEPS): a directory of moab.cfg files (each *.cfg is a configuration), or moab.cfg parameters with the values to try, PARAM=V1,V2,... (every combination is a configuration, added to --config or the defaults)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l sweep-csv -d '--sweep: also write the comparison as CSV here (`-` = standard output; the table then goes to standard error)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l sweep-json -d '--sweep: also write every configuration\'s whole summary as JSON here (`-` = standard output; the table then goes to standard error)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l malleable -d 'Make a share (0-1) of the jobs malleable: each may use up to FACTOR (default 2) times its processors, capped at the machine; chosen by job number, the same jobs every run. Jobs with a node layout stay rigid' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l growth -d 'When running malleable jobs grow (MALLEABLEGROWTH): BEFOREBACKFILL (default), AFTERBACKFILL or NONE' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l sanitize -d 'SC\'15 strong filter: drop jobs with run time, processors or requested time <= 0 (counted as sanitize_dropped) and cut run times at the request'
complete -c moab -n "__fish_moab_using_subcommand simulate" -l skip-malformed -d 'Skip malformed input lines (SWF or JSONL; counted in the summary\'s `malformed_lines`) instead of failing with `file:line: what`'
complete -c moab -n "__fish_moab_using_subcommand simulate" -l serve -d 'With --until: stop the replay at T and serve the normal client API (showq, checkjob, showbf, showres, mdiag, ...) on the socket, with the virtual clock as "now"; `mschedctl -S [N]` runs N more iterations, `mschedctl -k` stops (see SERVED SIMULATION)'
complete -c moab -n "__fish_moab_using_subcommand simulate" -l gen-batch-only -d 'Generator: batch jobs only (default: batch and interactive jobs, as the model\'s reference program)'
complete -c moab -n "__fish_moab_using_subcommand simulate" -l resize-requests -d 'With --malleable: each malleable job also asks for its extra processors a quarter into its run (a resize request, mjobctl -m proccount+=N); use --growth NONE to measure requests alone'
complete -c moab -n "__fish_moab_using_subcommand simulate" -s h -l help -d 'Print help (see more with \'--help\')'
