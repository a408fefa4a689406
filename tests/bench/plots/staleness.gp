# staleness.dat: "percentile ms" (tests/bench/staleness.c -o).
load 'tests/bench/plots/common.gpi'
set title "Staleness of direct writes seen through a node (500 writes/s, binlog mode)"
set xlabel 'staleness (ms, log scale): commit on MariaDB to a read through the node that returns it'
set ylabel 'share of writes (%)'
set logscale x 10
set format x '%g'
set yrange [0:100]
set key top left
set xrange [0.01:100]
set arrow from 20, graph 0 to 20, graph 1 nohead dt 3 lc rgb '#cf222e'
set label 'goal: p99 ≤ 20 ms' at 20, 10 offset 0.5, 0 textcolor rgb '#cf222e'
plot datafile using ($2 > 0.01 ? $2 : 0.01):1 with lines ls 1 title 'writes seen within x ms'
