/**
 * The schema, as `@effect/sql` migrations (recorded in `effect_sql_migrations`, applied under a table lock, each
 * statement idempotent so a half-applied run can be repeated).
 *
 * Audit events are one table (not partitioned: a unique `event_id` is what makes retries and dead-letter replays
 * idempotent). There is no GIN index on `event_data`: the `detail_key` filter compares `->>` text, which it could
 * not use, and it would cost about a third of the ingest time. Each correlation id's events form a hash chain ordered by `chain_position`; triggers make the core
 * columns immutable, refuse to delete held rows (also through TRUNCATE), and only let a hold be lifted inside the
 * release path (`SET LOCAL kubemend.allow_hold_release = 'on'`). `audit_chain_heads` records each chain's last link at
 * write time, so deleting the newest events of a chain is detected too.
 */
import { PgMigrator } from "@effect/sql-pg"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const auditSchema = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE TABLE IF NOT EXISTS audit_events (
      seq bigserial NOT NULL,
      event_id uuid PRIMARY KEY,
      event_version varchar(20) NOT NULL,
      event_timestamp timestamptz NOT NULL,
      event_date date NOT NULL,
      event_type varchar(100) NOT NULL,
      event_category varchar(50) NOT NULL,
      event_action varchar(50) NOT NULL,
      event_outcome varchar(20) NOT NULL,
      actor_type text,
      actor_id text,
      actor_ip varchar(45),
      resource_type text,
      resource_id text,
      correlation_id varchar(255) NOT NULL,
      parent_event_id uuid,
      parent_event_date text,
      namespace text,
      cluster_id text,
      severity text,
      duration_ms integer,
      error_code text,
      error_message text,
      retention_days integer NOT NULL,
      is_sensitive boolean,
      event_data jsonb NOT NULL,
      chain_position integer NOT NULL,
      event_hash char(64) NOT NULL,
      previous_event_hash text NOT NULL,
      hash_algorithm varchar(20) NOT NULL,
      legal_hold boolean NOT NULL DEFAULT false,
      legal_hold_reason text,
      legal_hold_placed_by text,
      legal_hold_placed_at timestamptz,
      stored_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT audit_events_chain_position_key UNIQUE (correlation_id, chain_position)
    );
    CREATE INDEX IF NOT EXISTS audit_events_timestamp_idx ON audit_events (event_timestamp);
    CREATE INDEX IF NOT EXISTS audit_events_type_idx ON audit_events (event_type, event_timestamp);
    CREATE INDEX IF NOT EXISTS audit_events_category_idx ON audit_events (event_category, event_timestamp);
    CREATE INDEX IF NOT EXISTS audit_events_actor_idx ON audit_events (actor_id);
    CREATE INDEX IF NOT EXISTS audit_events_held_idx ON audit_events (correlation_id) WHERE legal_hold;
    CREATE INDEX IF NOT EXISTS audit_events_target_idx ON audit_events ((event_data->>'target_resource'))
      WHERE event_type = 'remediation.workflow_created';
    CREATE INDEX IF NOT EXISTS audit_events_workflow_idx ON audit_events ((event_data->>'workflow_id'))
      WHERE event_type LIKE 'workflowexecution.%';

    CREATE TABLE IF NOT EXISTS audit_chain_heads (
      correlation_id varchar(255) PRIMARY KEY,
      chain_position integer NOT NULL,
      event_hash char(64) NOT NULL
    );

    CREATE TABLE IF NOT EXISTS legal_holds (
      id bigserial PRIMARY KEY,
      correlation_id varchar(255) NOT NULL,
      reason text NOT NULL,
      placed_by text NOT NULL,
      placed_at timestamptz NOT NULL,
      released_by text,
      released_at timestamptz,
      release_reason text
    );
    CREATE UNIQUE INDEX IF NOT EXISTS legal_holds_active_idx ON legal_holds (correlation_id) WHERE released_at IS NULL;

    CREATE OR REPLACE FUNCTION audit_events_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF (OLD.seq, OLD.event_id, OLD.event_version, OLD.event_timestamp, OLD.event_date, OLD.event_type,
          OLD.event_category, OLD.event_action, OLD.event_outcome, OLD.actor_type, OLD.actor_id, OLD.actor_ip,
          OLD.resource_type, OLD.resource_id, OLD.correlation_id, OLD.parent_event_id, OLD.parent_event_date,
          OLD.namespace, OLD.cluster_id, OLD.severity, OLD.duration_ms, OLD.error_code, OLD.error_message,
          OLD.retention_days, OLD.is_sensitive, OLD.event_data, OLD.chain_position, OLD.event_hash,
          OLD.previous_event_hash, OLD.hash_algorithm, OLD.stored_at)
         IS DISTINCT FROM
         (NEW.seq, NEW.event_id, NEW.event_version, NEW.event_timestamp, NEW.event_date, NEW.event_type,
          NEW.event_category, NEW.event_action, NEW.event_outcome, NEW.actor_type, NEW.actor_id, NEW.actor_ip,
          NEW.resource_type, NEW.resource_id, NEW.correlation_id, NEW.parent_event_id, NEW.parent_event_date,
          NEW.namespace, NEW.cluster_id, NEW.severity, NEW.duration_ms, NEW.error_code, NEW.error_message,
          NEW.retention_days, NEW.is_sensitive, NEW.event_data, NEW.chain_position, NEW.event_hash,
          NEW.previous_event_hash, NEW.hash_algorithm, NEW.stored_at) THEN
        RAISE EXCEPTION 'audit event % is immutable', OLD.event_id USING ERRCODE = 'KMIM1';
      END IF;
      IF OLD.legal_hold AND NOT NEW.legal_hold
         AND coalesce(current_setting('kubemend.allow_hold_release', true), '') <> 'on' THEN
        RAISE EXCEPTION 'legal hold on audit event % can only be released through the API', OLD.event_id
          USING ERRCODE = 'KMLH1';
      END IF;
      RETURN NEW;
    END $$;

    CREATE OR REPLACE FUNCTION audit_events_legal_hold_guard() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'audit event % is under legal hold and cannot be deleted', OLD.event_id USING ERRCODE = 'KMLH1';
    END $$;

    CREATE OR REPLACE FUNCTION audit_events_truncate_guard() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM audit_events WHERE legal_hold) THEN
        RAISE EXCEPTION 'audit_events holds events under legal hold and cannot be truncated' USING ERRCODE = 'KMLH1';
      END IF;
      RETURN NULL;
    END $$;

    DROP TRIGGER IF EXISTS audit_events_immutable ON audit_events;
    CREATE TRIGGER audit_events_immutable BEFORE UPDATE ON audit_events
      FOR EACH ROW EXECUTE FUNCTION audit_events_immutable();
    DROP TRIGGER IF EXISTS audit_events_legal_hold_guard ON audit_events;
    CREATE TRIGGER audit_events_legal_hold_guard BEFORE DELETE ON audit_events
      FOR EACH ROW WHEN (OLD.legal_hold) EXECUTE FUNCTION audit_events_legal_hold_guard();
    DROP TRIGGER IF EXISTS audit_events_truncate_guard ON audit_events;
    CREATE TRIGGER audit_events_truncate_guard BEFORE TRUNCATE ON audit_events
      FOR EACH STATEMENT EXECUTE FUNCTION audit_events_truncate_guard();

    CREATE TABLE IF NOT EXISTS notification_audit (
      id bigserial PRIMARY KEY,
      remediation_id varchar(255) NOT NULL,
      notification_id varchar(255) NOT NULL UNIQUE,
      recipient varchar(500) NOT NULL,
      channel varchar(50) NOT NULL,
      message_summary varchar(1000) NOT NULL,
      status varchar(50) NOT NULL,
      sent_at timestamptz NOT NULL,
      delivery_status varchar(255),
      error_message varchar(1000),
      escalation_level integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
  `)
})

const catalogSchema = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE TABLE IF NOT EXISTS action_types (
      action_type text PRIMARY KEY,
      description jsonb NOT NULL,
      status varchar(20) NOT NULL DEFAULT 'Active',
      registered_by text,
      updated_by text,
      disabled_at timestamptz,
      disabled_by text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE IF NOT EXISTS workflows (
      workflow_id uuid PRIMARY KEY,
      workflow_name varchar(255) NOT NULL,
      version varchar(50) NOT NULL,
      action_type text NOT NULL REFERENCES action_types (action_type),
      content text NOT NULL,
      content_hash char(64) NOT NULL,
      parsed jsonb NOT NULL,
      status varchar(20) NOT NULL DEFAULT 'Active',
      status_reason text,
      disabled_at timestamptz,
      disabled_by text,
      disabled_reason text,
      deprecation_notice text,
      is_latest_version boolean NOT NULL DEFAULT true,
      previous_version varchar(50),
      created_by text,
      updated_by text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT workflows_name_version_key UNIQUE (workflow_name, version)
    );
    CREATE INDEX IF NOT EXISTS workflows_action_type_idx ON workflows (action_type, status);
  `)
})

export const migrations = {
  "1_audit": auditSchema,
  "2_catalog": catalogSchema
}

/** Runs the pending migrations (needs the platform's FileSystem/Path/CommandExecutor: `NodeContext.layer`). */
export const runMigrations = PgMigrator.run({ loader: PgMigrator.fromRecord(migrations) })
