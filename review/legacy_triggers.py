"""The first triggers on insert-only tables, as migrations 0003 and 0005 installed them; 0006 replaced them
with dedup_site.guards (UPDATE and DELETE refused on SQLite as on PostgreSQL).

PostgreSQL: a trigger refuses UPDATE and DELETE. SQLite: a trigger refuses UPDATE (row DELETE stays
possible there only so the test runner can empty tables between tests; the application never deletes).
"""


def create(schema_editor, tables: list[str]) -> None:
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "CREATE OR REPLACE FUNCTION review_insert_only() RETURNS trigger AS $$ BEGIN "
                "RAISE EXCEPTION '% rows are insert-only', TG_TABLE_NAME; END; $$ LANGUAGE plpgsql"
            )
            for table in tables:
                cursor.execute(
                    f"CREATE TRIGGER {table}_insert_only BEFORE UPDATE OR DELETE ON {table} "
                    f"FOR EACH ROW EXECUTE FUNCTION review_insert_only()"
                )
        elif connection.vendor == "sqlite":
            for table in tables:
                cursor.execute(
                    f"CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table} "
                    f"BEGIN SELECT RAISE(ABORT, '{table} rows are insert-only'); END"
                )


def drop(schema_editor, tables: list[str]) -> None:
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        for table in tables:
            if connection.vendor == "postgresql":
                cursor.execute(f"DROP TRIGGER IF EXISTS {table}_insert_only ON {table}")
            elif connection.vendor == "sqlite":
                cursor.execute(f"DROP TRIGGER IF EXISTS {table}_no_update")
