# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_moab_global_optspecs
    string join \n config= socket= home= h/help V/version
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
complete -c moab -n "__fish_moab_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c moab -n "__fish_moab_needs_command" -s V -l version -d 'Print version'
complete -c moab -n "__fish_moab_needs_command" -f -a "simulate" -d 'Replay a workload (SWF trace or JSONL) through the real scheduling engine with a virtual clock, as fast as the CPU allows, and report wait times, bounded slowdown, utilisation and backfill statistics'
complete -c moab -n "__fish_moab_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c moab -n "__fish_moab_using_subcommand simulate" -l trace -d 'SWF trace to replay (plain or gzip)' -r -F
complete -c moab -n "__fish_moab_using_subcommand simulate" -l workload -d 'JSONL workload to replay (one job per line, see the arches-sim docs)' -r -F
complete -c moab -n "__fish_moab_using_subcommand simulate" -l procs -d 'Machine size in processors (default: the --config nodes, else the trace header\'s MaxProcs)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l procs-per-node -d 'Processors per node (default: one node holding every processor)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l config -d 'moab.cfg to take the policy and the nodes (NODECFG) from; the flags below override it' -r -F
complete -c moab -n "__fish_moab_using_subcommand simulate" -l backfill -d 'BACKFILLPOLICY: FIRSTFIT (default), BESTFIT, GREEDY, NONE' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l reservation-depth -d 'RESERVATIONDEPTH (default 1 = EASY); `all` reserves for every queued job (conservative backfill)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l reservation-policy -d 'RESERVATIONPOLICY: CURRENTHIGHEST (default: reservations recomputed every iteration), HIGHEST (kept and only compressed: pyss\'s conservative backfill with `--reservation-depth all`), NEVER' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l runtime-prediction -d 'RUNTIMEPREDICTION: NONE (plan with the walltimes) or USERMEAN2 (plan with the mean of the user\'s last two run times, extended stepwise when a job outlives it: EASY++). Default: the --config value, else NONE' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l bf-order -d 'BFORDER: PRIORITY (default), SHORTESTPREDICTEDFIRST (SJBF: backfill candidates shortest planning duration first) or WIDESTWINDOWFIRST (FIRSTFIT traverses the backfill windows widest first). Default: the --config value, else PRIORITY' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l summary -d 'Where to write the summary JSON (`-` = stdout)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l jobs-csv -d 'Write one CSV line per job here' -r -F
complete -c moab -n "__fish_moab_using_subcommand simulate" -l min-job-id -d 'Keep only jobs numbered at least N (KTH\'s cleaned log: 15)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l report -d 'Write a self-contained HTML report (SVG charts) here' -r -F
complete -c moab -n "__fish_moab_using_subcommand simulate" -l until -d 'Stop the clock T seconds after the trace start' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l socket -d 'Socket for --serve (default: MOAB_SOCKET, else <home>/moab.sock)' -r -F
complete -c moab -n "__fish_moab_using_subcommand simulate" -l generate -d 'Write a synthetic Lublin & Feitelson workload to this SWF file and exit' -r -F
complete -c moab -n "__fish_moab_using_subcommand simulate" -l gen-jobs -d 'Generator: number of jobs' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l seed -d 'Generator: PRNG seed' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l target-load -d 'Generator: target offered load (0 < L)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l staging -d 'Data staging model for the jobs\' stage-in (JSONL `stagein` seconds or `stagein_size` MB, else --stage-size): SELF (the job stages its own data on its nodes), LOOSE or TIGHT (DATASTAGEMODEL). Prints the compute processor-hours idle waiting for data' -r -f -a "SELF\t'The job stages its own data while holding its nodes'
LOOSE\t'Scheduler-initiated in priority order; no reservation until ready'
TIGHT\t'Scheduler-initiated; compute reserved from the data-ready time'"
complete -c moab -n "__fish_moab_using_subcommand simulate" -l stage-rate -d '--staging: transfer rate of one staging operation, KB/s' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l stage-maxdsop -d '--staging: simultaneous staging operations (MAXDSOP)' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l stage-size -d '--staging: stage-in size (MB) of every job without its own' -r
complete -c moab -n "__fish_moab_using_subcommand simulate" -l sanitize -d 'SC\'15 strong filter: drop jobs with run, processors or requested time <= 0'
complete -c moab -n "__fish_moab_using_subcommand simulate" -l skip-malformed -d 'Skip malformed trace lines (counted in the summary) instead of failing'
complete -c moab -n "__fish_moab_using_subcommand simulate" -l serve -d 'With --until: stop the replay at T and serve the normal client API (showq, checkjob, showbf, mschedctl -S to step, -k to stop) on the socket, with the virtual clock as "now"'
complete -c moab -n "__fish_moab_using_subcommand simulate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c moab -n "__fish_moab_using_subcommand help; and not __fish_seen_subcommand_from simulate help" -f -a "simulate" -d 'Replay a workload (SWF trace or JSONL) through the real scheduling engine with a virtual clock, as fast as the CPU allows, and report wait times, bounded slowdown, utilisation and backfill statistics'
complete -c moab -n "__fish_moab_using_subcommand help; and not __fish_seen_subcommand_from simulate help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
