"""nccl-tests reports: parse logs, judge them against sourced floors, render and plot."""
