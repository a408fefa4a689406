-- tests/bench/warm.lua: run oltp_point_select's query once for every id
-- of sbtest1, so that a node with --auto-cache holds every key before the
-- measured run. The statement, its parameter type and the way it is sent
-- (server-side prepared, or client-side substituted text with
-- --db-ps-mode=disable) are exactly oltp_common.lua's, so the cache keys are
-- the ones the measured run will look up.
--
--   sysbench tests/bench/warm.lua --threads=8 --table-size=100000 \
--     --db-ps-mode=auto|disable --mysql-... warm
--
-- Thread t takes ids t+1, t+1+threads, ... (a parallel command, so every id
-- is run exactly once whatever the scheduling).

sysbench.cmdline.options = {
   table_size = {"Number of rows of sbtest1", 10000},
   tables = {"Number of tables (only sbtest1 is warmed)", 1},
}

function cmd_warm()
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   local stmt = con:prepare("SELECT c FROM sbtest1 WHERE id=?")
   local param = stmt:bind_create(sysbench.sql.type.INT)
   stmt:bind_param(param)
   local n = 0
   for id = sysbench.tid % sysbench.opt.threads + 1, sysbench.opt.table_size,
      sysbench.opt.threads do
      param:set(id)
      stmt:execute()
      n = n + 1
   end
   stmt:close()
   con:disconnect()
end

sysbench.cmdline.commands = {
   warm = {cmd_warm, sysbench.cmdline.PARALLEL_COMMAND},
}
