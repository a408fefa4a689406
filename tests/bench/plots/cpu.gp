# cpu.dat: "server prepared_us text_us" rows: CPU per cached point select.
load 'tests/bench/plots/common.gpi'
set title "Server CPU per cached point select (sysbench, 8 threads; lower is better)"
set ylabel 'CPU µs per query'
set yrange [0:*]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics scale 0
set key top left
plot datafile using 2:xtic(1) title 'prepared statements' lc rgb '#1f77b4', \
     '' using 3 title 'text protocol' lc rgb '#d9771e', \
     '' using ($0 - 0.17):($2 + 1.2):(sprintf('%.1f', $2)) with labels notitle font 'sans,10', \
     '' using ($0 + 0.17):($3 + 1.2):(sprintf('%.1f', $3)) with labels notitle font 'sans,10'
