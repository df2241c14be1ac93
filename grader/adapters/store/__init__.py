"""The results database: PostgreSQL (psycopg 3), its plain-SQL migrations, its
connections kept in a pool between uses, and the project-local server used unless a
site database is configured."""
