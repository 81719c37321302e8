#!/bin/sh
# The service roles of docker-compose.yml, made once by the postgres image on
# an empty data volume (/docker-entrypoint-initdb.d, as the superuser):
#
#   mail      the API and the workers: owns the `mail` database, nothing else
#   temporal  the Temporal server: owns `temporal` and `temporal_visibility`
#
# Neither is a superuser, may create roles or databases, or connect to the
# other's databases, so a leaked DATABASE_URL cannot read or rewrite
# Temporal's histories, and Temporal's credentials cannot read the mail
# data. Passwords come from the environment (MAIL_DB_PASSWORD,
# TEMPORAL_DB_PASSWORD) and are passed to psql as variables, never spliced
# into SQL text. To apply it to an existing volume, run it by hand:
#   docker compose exec postgres sh /docker-entrypoint-initdb.d/10-roles.sh
set -eu

: "${MAIL_DB_PASSWORD:?MAIL_DB_PASSWORD is not set}"
: "${TEMPORAL_DB_PASSWORD:?TEMPORAL_DB_PASSWORD is not set}"

psql -v ON_ERROR_STOP=1 --no-psqlrc --username "${POSTGRES_USER:-postgres}" --dbname postgres \
  -v mail_password="$MAIL_DB_PASSWORD" -v temporal_password="$TEMPORAL_DB_PASSWORD" <<'SQL'
SELECT 'CREATE ROLE mail' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'mail') \gexec
SELECT 'CREATE ROLE temporal' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'temporal') \gexec
ALTER ROLE mail WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'mail_password';
ALTER ROLE temporal WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'temporal_password';

SELECT 'CREATE DATABASE mail OWNER mail' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'mail') \gexec
SELECT 'CREATE DATABASE temporal OWNER temporal' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'temporal') \gexec
SELECT 'CREATE DATABASE temporal_visibility OWNER temporal' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'temporal_visibility') \gexec

-- Only each database's own role may connect (PUBLIC may by default).
REVOKE ALL ON DATABASE mail FROM PUBLIC;
REVOKE ALL ON DATABASE temporal FROM PUBLIC;
REVOKE ALL ON DATABASE temporal_visibility FROM PUBLIC;
GRANT CONNECT, TEMPORARY ON DATABASE mail TO mail;
GRANT CONNECT, TEMPORARY ON DATABASE temporal, temporal_visibility TO temporal;

-- The extension the mail migrations use (trusted, but made here once by the superuser).
\connect mail
CREATE EXTENSION IF NOT EXISTS pg_trgm;
-- PostgreSQL 15+: the public schema belongs to pg_database_owner; make it the mail role's outright.
ALTER SCHEMA public OWNER TO mail;
SQL
