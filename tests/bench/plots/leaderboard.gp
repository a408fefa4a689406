# leaderboard.dat: "what p50_ms" rows (concurrency 1): direct, miss, hit, floor.
load 'tests/bench/plots/common.gpi'
set title "Seed 004's leaderboard query, one client: time to answer (ms, log scale)"
set logscale y 10
set format y '%g'
set ylabel 'milliseconds'
set yrange [0.01:*]
set style fill solid 0.85 border -1
set boxwidth 0.6
unset key
set xtics scale 0
plot datafile using 0:2:($0 == 0 ? 0x7f7f7f : $0 == 1 ? 0xd9771e : $0 == 2 ? 0x1f77b4 : 0x2ca02c):xtic(1) \
       with boxes lc rgb variable, \
     '' using 0:($2 * 1.6):(sprintf('%.3g ms', $2)) with labels font 'sans,11'
