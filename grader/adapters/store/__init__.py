"""The results database: PostgreSQL (psycopg 3), its plain-SQL migrations, and the
project-local server used unless a site database is configured."""
