#!/bin/bash
# accounting database set up in a cluster-init script
sacctmgr -i add cluster hpc
mysql --user slurm --password "$SLURM_DB_PASSWORD" -e 'create database slurm_acct_db'
