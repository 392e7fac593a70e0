FROM registry.example.com:5000/nccl-tests:2.21.5
