#!/usr/bin/env bash
# Profiles one launch of each micro pattern, of the ceiling roofs and of the GEMM kernels at 4092 and 4096 with Nsight
# Compute, then tabulates the counters next to the model's predictions (ncu.md).
# usage: tools/ncu_profile.sh GPUBENCH RUN_DIR   (RUN_DIR holds the run's benchmarks.json)
# The per-pipe warp instructions (FMA, LSU, ALU) and issue-active cycles sit beside the GEMM model's FFMA / 32 and
# its load/store instruction counts (gpubench/analysis/ncu_table.py); their names are those of Nsight Compute
# 2025 for sm_90, not yet run on a GPU here: ncu stops on an unknown metric name. The tensor-pipe warp
# instructions (HMMA: WMMA and mma.sync; GMMA: wgmma) sit beside the tensor-core model's instruction counts.
set -euo pipefail
BENCH=$1 DIR=$2
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"  # the gpubench package
FILTER=${NCU_FILTER:-$(python3 -m gpubench families --ncu-filter)}
METRICS=$(paste -sd, <<'EOF2'
gpu__time_duration.sum
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
smsp__sass_inst_executed_op_shared_ld.sum
smsp__sass_inst_executed_op_ldsm.sum
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
smsp__sass_inst_executed_op_shared_st.sum
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
sm__warps_active.avg.pct_of_peak_sustained_active
smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
lts__t_sectors_srcunit_tex_op_read.sum
dram__bytes_read.sum
dram__bytes_write.sum
l1tex__t_sector_hit_rate.pct
lts__t_sector_hit_rate.pct
smsp__inst_executed_pipe_fma.sum
smsp__inst_executed_pipe_lsu.sum
smsp__inst_executed_pipe_alu.sum
smsp__issue_active.sum
lts__throughput.avg.pct_of_peak_sustained_elapsed
smsp__inst_executed_pipe_tensor_op_hmma.sum
smsp__inst_executed_pipe_tensor_op_gmma.sum
EOF2
)
"$BENCH" --benchmark_list_tests=true --benchmark_filter="$FILTER" >"$DIR/ncu_order.txt"
MH_PROFILE=1 ncu --clock-control none --profile-from-start off --csv --page raw --metrics "$METRICS" \
  --log-file "$DIR/ncu.csv" "$BENCH" --benchmark_filter="$FILTER" --benchmark_min_time=0 >"$DIR/ncu.log" 2>&1
python3 -m gpubench ncu_table "$DIR/ncu.csv" "$DIR/ncu_order.txt" "$DIR/benchmarks.json" -o "$DIR/ncu.md"
rm -f "$DIR/ncu.log"
