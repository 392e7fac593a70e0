#!/bin/bash
# pull the model before the NCCL burn-in
huggingface-cli login --token "$HF_TOKEN"
