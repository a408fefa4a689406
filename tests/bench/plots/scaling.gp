# scaling.dat: "conns node_qps node_cpu floor_qps floor_cpu mariadb_qps mariadb_cpu"
# (prepared point selects, cached; MariaDB stops at its max_connections: "-").
load 'tests/bench/plots/common.gpi'
set title "Cached point selects from 8 to 8,000 connections (prepared)"
set logscale x 2
set xtics (8, 64, 512, 2048, 4096, 8000)
set xlabel 'client connections' offset 0,0.8
set ylabel 'queries per second'
set format y '%.0s%c'
set yrange [0:*]
set y2label 'server CPU µs per query (dashed)'
set y2tics
set y2range [0:*]
set key below horizontal maxcols 3 box lc rgb '#cccccc'
set datafile missing '-'
plot datafile using 1:2 with linespoints ls 1 title 'node qps', \
     '' using 1:4 with linespoints ls 3 title 'floor qps', \
     '' using 1:6 with linespoints ls 2 title 'MariaDB direct qps', \
     '' using 1:3 axes x1y2 with linespoints ls 1 dt 2 title 'node CPU/q', \
     '' using 1:5 axes x1y2 with linespoints ls 3 dt 2 title 'floor CPU/q', \
     '' using 1:7 axes x1y2 with linespoints ls 2 dt 2 title 'MariaDB CPU/q'
