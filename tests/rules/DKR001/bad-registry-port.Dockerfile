FROM registry.example.com:5000/nccl-tests
FROM registry.example.com:5000/nccl-tests:latest
