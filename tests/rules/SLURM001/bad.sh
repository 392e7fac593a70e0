# Copyright (c) 2023, Example Corp.
# Licensed under the Apache License, Version 2.0.

#!/bin/bash
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
srun --mpi=pmix all_reduce_perf -b 8 -e 8G
