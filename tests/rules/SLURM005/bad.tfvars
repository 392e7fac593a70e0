location = "us-east1-a"
partitions = [
  {
    name            = "gb200"
    count           = 18
    type            = "gb200-186gb-nvl-ib.4x"
    imex_support    = true
    image           = "ubuntu24.04-nvidia-slurm"
    custom_image    = null
    reservation_id  = null
  },
  {
    name            = "h200"
    count           = 2
    type            = "h200-141gb-sxm-ib.8x"
    image           = "ubuntu24.04-nvidia-slurm"
    custom_image    = null
  }
]
