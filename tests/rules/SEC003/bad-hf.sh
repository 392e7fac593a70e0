#!/bin/bash
# pull the model before the NCCL burn-in
huggingface-cli login --token hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh
