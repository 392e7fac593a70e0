#!/bin/bash
# NHC sources every *.nhc in /etc/nhc/scripts: install the site test beside the conf.
set -e
install -m 644 nhc.conf /etc/nhc/nhc.conf
install -m 644 dcgm_health.nhc /etc/nhc/scripts/dcgm_health.nhc
