
#!/bin/bash
#SBATCH --nodes=2
srun hostname
