#!/bin/sh
exec ./app "$@"
