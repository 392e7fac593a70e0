#!/bin/bash
# accounting database set up in a cluster-init script
sacctmgr -i add cluster hpc
mysql --user slurm --password Sl4rm-acct-2024 -e 'create database slurm_acct_db'
