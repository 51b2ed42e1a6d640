#!/bin/sh
# Runs once, when the postgres service initialises its empty volume (docker-entrypoint-initdb.d): gives the Inngest
# server a role and a database of its own beside the app's, so neither can read or change the other's tables.
set -eu
psql -v ON_ERROR_STOP=1 -v password="$INNGEST_POSTGRES_PASSWORD" --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<'SQL'
CREATE ROLE inngest LOGIN PASSWORD :'password';
CREATE DATABASE inngest OWNER inngest;
SQL
