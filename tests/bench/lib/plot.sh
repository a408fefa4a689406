# shellcheck shell=bash
# tests/bench/lib/plot.sh: the figures of docs/benchmarks.md (scripts/bench
# sources this; functions only). Each section that has a figure writes its
# raw numbers to docs/bench/NAME.dat (plot_data) when it writes its table;
# bench_plots turns every docs/bench/NAME.dat that has a script
# tests/bench/plots/NAME.gp into docs/bench/NAME.svg with gnuplot.
#
#   leaderboard  seed 004's query at concurrency 1: direct, the miss that
#                fills the cache, a hit, the floor (section 5)
#   cpu          server CPU per cached point select: floor, node, ProxySQL's
#                query cache, MariaDB; prepared and text (section 1b)
#   scaling      qps and CPU per query from 8 to 8,000 connections: node,
#                floor, MariaDB (section 1)
#   staleness    the distribution of staleness under 500 direct writes/s
#                (section 7)

PLOT_DATA_DIR=${PLOT_DATA_DIR:-$SRCDIR/docs/bench}

# plot_data NAME: standard input becomes docs/bench/NAME.dat, under a header
# naming the commit, the date and the run it came from.
plot_data() {
  local name=$1 commit
  commit=$(git -C "$SRCDIR" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
  mkdir -p "$PLOT_DATA_DIR"
  {
    echo "# $name: written by scripts/bench ($(date -u '+%F %H:%M') UTC, commit $commit, quick=${quick:-0})"
    cat
  } >"$PLOT_DATA_DIR/$name.dat.new" && mv "$PLOT_DATA_DIR/$name.dat.new" "$PLOT_DATA_DIR/$name.dat"
}

# bench_plots [DATA_DIR [OUT_DIR]]: draw every figure whose data exists.
# Returns 1 when gnuplot is missing or a figure failed.
bench_plots() {
  local data=${1:-$PLOT_DATA_DIR} out=${2:-${1:-$PLOT_DATA_DIR}} gp name rc=0
  if ! command -v gnuplot >/dev/null; then
    log "gnuplot is not installed (Debian package gnuplot-nox): the figures are not redrawn"
    return 1
  fi
  mkdir -p "$out"
  for gp in "$SRCDIR"/tests/bench/plots/*.gp; do
    name=$(basename "$gp" .gp)
    [ -s "$data/$name.dat" ] || { log "no $data/$name.dat: $name.svg not drawn"; continue; }
    if (cd "$SRCDIR" && gnuplot -e "datafile='$data/$name.dat'; outfile='$out/$name.svg.new'" "$gp") 2>"$out/$name.gnuplot.err" &&
      [ -s "$out/$name.svg.new" ]; then
      mv "$out/$name.svg.new" "$out/$name.svg"
      rm -f "$out/$name.gnuplot.err"
      log "drew $out/$name.svg"
    else
      log "gnuplot failed on $name (see $out/$name.gnuplot.err)"
      rm -f "$out/$name.svg.new"
      rc=1
    fi
  done
  return $rc
}
