"""Versioned schema. Each entry moves the database from version N-1 to N; never edit a released one."""

MIGRATIONS: list[str] = [
    # 1: the request ledger
    """
    CREATE TABLE principals (
        name        TEXT PRIMARY KEY,
        kind        TEXT NOT NULL CHECK (kind IN ('owner', 'person', 'machine', 'agent')),
        token_hash  TEXT UNIQUE,
        created_at  REAL NOT NULL,
        revoked_at  REAL
    );
    CREATE TABLE agents (
        name        TEXT PRIMARY KEY,
        runtime     TEXT NOT NULL,
        folder      TEXT NOT NULL,
        options     TEXT NOT NULL DEFAULT '{}',
        created_at  REAL NOT NULL
    );
    CREATE TABLE id_counters (
        owner TEXT NOT NULL,
        day   TEXT NOT NULL,
        last  INTEGER NOT NULL,
        PRIMARY KEY (owner, day)
    );
    CREATE TABLE requests (
        id                TEXT PRIMARY KEY,
        owner             TEXT NOT NULL,
        agent             TEXT NOT NULL REFERENCES agents(name),
        requester         TEXT NOT NULL REFERENCES principals(name),
        prompt            TEXT NOT NULL,
        state             TEXT NOT NULL,
        created_at        REAL NOT NULL,
        updated_at        REAL NOT NULL,
        expires_at        REAL,
        approved_at       REAL,
        queue_seq         INTEGER UNIQUE,
        started_at        REAL,
        ended_at          REAL,
        retry_of          TEXT REFERENCES requests(id),
        refs              TEXT NOT NULL DEFAULT '[]',
        session_ref       TEXT,
        progress          REAL,
        result            TEXT,
        exit_code         INTEGER,
        cancel_requested  INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX requests_by_state ON requests(state, agent, queue_seq);
    CREATE INDEX requests_by_requester ON requests(requester, created_at);
    CREATE TABLE timeline (
        id          INTEGER PRIMARY KEY,
        request_id  TEXT NOT NULL REFERENCES requests(id),
        at          REAL NOT NULL,
        kind        TEXT NOT NULL,
        state       TEXT NOT NULL,
        text        TEXT NOT NULL
    );
    CREATE INDEX timeline_by_request ON timeline(request_id, id);
    CREATE TABLE audit (
        seq         INTEGER PRIMARY KEY,
        at          REAL NOT NULL,
        actor       TEXT NOT NULL,
        action      TEXT NOT NULL,
        request_id  TEXT,
        reason      TEXT NOT NULL,
        prev_hash   TEXT NOT NULL,
        hash        TEXT NOT NULL
    );
    CREATE TRIGGER audit_is_append_only_update BEFORE UPDATE ON audit
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
    CREATE TRIGGER audit_is_append_only_delete BEFORE DELETE ON audit
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
    CREATE TABLE settings (
        key    TEXT PRIMARY KEY,
        value  TEXT NOT NULL
    );
    CREATE TABLE tasks (
        id          TEXT PRIMARY KEY,
        request_id  TEXT REFERENCES requests(id),
        kind        TEXT NOT NULL,
        dir         TEXT NOT NULL,
        started_at  REAL NOT NULL,
        ended_at    REAL,
        exit_code   INTEGER,
        outcome     TEXT
    );
    CREATE INDEX tasks_by_request ON tasks(request_id);
    """,
    # 2: questions an agent asks the people behind its request, the tokens its session answers to, and background
    #    tasks (commands and monitors an agent or the owner left running)
    """
    CREATE TABLE questions (
        id           INTEGER PRIMARY KEY,
        request_id   TEXT NOT NULL REFERENCES requests(id),
        asked_at     REAL NOT NULL,
        text         TEXT NOT NULL,
        options      TEXT NOT NULL DEFAULT '[]',
        answer       TEXT,
        answered_at  REAL,
        answered_by  TEXT,
        call_key     TEXT UNIQUE
    );
    CREATE INDEX questions_by_request ON questions(request_id, id);
    CREATE TABLE session_tokens (
        token_hash  TEXT PRIMARY KEY,
        request_id  TEXT NOT NULL REFERENCES requests(id),
        created_at  REAL NOT NULL
    );
    ALTER TABLE tasks ADD COLUMN agent TEXT;
    ALTER TABLE tasks ADD COLUMN description TEXT NOT NULL DEFAULT '';
    ALTER TABLE tasks ADD COLUMN command TEXT NOT NULL DEFAULT '';
    ALTER TABLE tasks ADD COLUMN last_output_at REAL;
    ALTER TABLE tasks ADD COLUMN stopping_at REAL;
    ALTER TABLE tasks ADD COLUMN stop_reason TEXT;
    ALTER TABLE tasks ADD COLUMN tests TEXT;
    CREATE INDEX tasks_by_agent ON tasks(agent, ended_at);
    """,
    # 3: agents can be removed; their requests keep their name
    """
    ALTER TABLE agents ADD COLUMN removed_at REAL;
    """,
    # 4: the room: people signed in from a browser, and one-time sign-in codes (only hashes are stored)
    """
    CREATE TABLE web_sessions (
        id_hash      TEXT PRIMARY KEY,
        principal    TEXT NOT NULL REFERENCES principals(name),
        created_at   REAL NOT NULL,
        expires_at   REAL NOT NULL
    );
    CREATE INDEX web_sessions_by_principal ON web_sessions(principal);
    CREATE TABLE room_codes (
        code_hash    TEXT PRIMARY KEY,
        principal    TEXT NOT NULL REFERENCES principals(name),
        expires_at   REAL NOT NULL
    );
    """,
    # 5: chat connectors: who is who in the chat, each request's thread, and what is still to be posted there
    """
    CREATE TABLE connectors (
        name         TEXT PRIMARY KEY,
        config       TEXT NOT NULL,
        added_at     REAL NOT NULL
    );
    CREATE TABLE chat_people (
        connector    TEXT NOT NULL,
        chat_user    TEXT NOT NULL,
        principal    TEXT NOT NULL REFERENCES principals(name),
        PRIMARY KEY (connector, chat_user)
    );
    CREATE TABLE chat_threads (
        connector    TEXT NOT NULL,
        request_id   TEXT NOT NULL REFERENCES requests(id),
        channel      TEXT NOT NULL,
        origin       TEXT,
        thread       TEXT,
        approval     TEXT,
        PRIMARY KEY (connector, request_id)
    );
    CREATE TABLE chat_outbox (
        seq          INTEGER PRIMARY KEY AUTOINCREMENT,
        connector    TEXT NOT NULL,
        request_id   TEXT NOT NULL,
        kind         TEXT NOT NULL,
        body         TEXT NOT NULL,
        created_at   REAL NOT NULL,
        posted_at    REAL
    );
    CREATE INDEX chat_outbox_waiting ON chat_outbox(connector, posted_at, seq);
    """,
    # 6: sessions agents start (each runs as a hidden agent of its own), the owner's session groups, which
    #    conversations the owner let start sessions, and which request asked for a request
    """
    CREATE TABLE session_groups (
        name         TEXT PRIMARY KEY,
        created_at   REAL NOT NULL
    );
    CREATE TABLE sessions (
        id              TEXT PRIMARY KEY REFERENCES agents(name),
        title           TEXT NOT NULL,
        group_name      TEXT REFERENCES session_groups(name),
        parent_request  TEXT NOT NULL REFERENCES requests(id),
        conversation    TEXT NOT NULL,
        may_create      INTEGER NOT NULL DEFAULT 0,
        created_at      REAL NOT NULL,
        archived_at     REAL
    );
    CREATE TABLE conversations (
        key             TEXT PRIMARY KEY,
        approved_at     REAL,
        approved_by     TEXT,
        agent_prompts   INTEGER NOT NULL DEFAULT 0
    );
    ALTER TABLE requests ADD COLUMN parent_id TEXT REFERENCES requests(id);
    ALTER TABLE requests ADD COLUMN via_model TEXT;
    ALTER TABLE requests ADD COLUMN call_key TEXT;
    CREATE INDEX requests_by_parent ON requests(parent_id);
    CREATE UNIQUE INDEX requests_by_call_key ON requests(call_key);
    ALTER TABLE questions ADD COLUMN owner_only INTEGER NOT NULL DEFAULT 0;
    """,
    # 7: a request the owner denied reads "denied" (its state is cancelled, as before)
    """
    ALTER TABLE requests ADD COLUMN denied INTEGER NOT NULL DEFAULT 0;
    UPDATE requests SET denied = 1
        WHERE state = 'cancelled' AND id IN (SELECT request_id FROM audit WHERE action = 'deny');
    """,
    # 8: background continuations: the turn a task's end woke (continuation_of: the request whose turn started it),
    #    and what each ended task woke (a request ID, or why none; tasks that ended before this version woke none)
    """
    ALTER TABLE requests ADD COLUMN continuation_of TEXT REFERENCES requests(id);
    CREATE INDEX requests_by_continuation ON requests(continuation_of);
    ALTER TABLE tasks ADD COLUMN woke TEXT;
    UPDATE tasks SET woke = 'ended before continuations' WHERE ended_at IS NOT NULL;
    """,
    # 9: a conversation watching a session is woken by what the session does (MCP watch_session)
    """
    CREATE TABLE watches (
        conversation    TEXT NOT NULL,  -- a session's ID, or the first request of a chain of continuations
        session         TEXT NOT NULL REFERENCES sessions(id),
        events          TEXT NOT NULL,  -- JSON: the kinds of news it wants
        created_at      REAL NOT NULL,
        PRIMARY KEY (conversation, session)
    );
    CREATE INDEX requests_by_agent ON requests(agent, created_at);
    """,
    # 10: a request's runtime conversation (what Claude Code, Gemini and Copilot call a session, Codex a thread) is
    #     its conversation_ref; "session" is kept for the sessions agents start
    """
    ALTER TABLE requests RENAME COLUMN session_ref TO conversation_ref;
    UPDATE timeline SET kind = 'conversation' WHERE kind = 'session';
    """,
]
