-- Indexes for the admin user list's sort columns.
CREATE INDEX users_lower_first_name_idx ON users (lower(first_name));
CREATE INDEX users_lower_last_name_idx ON users (lower(last_name));
CREATE INDEX users_lower_email_sort_idx ON users (lower(email) text_pattern_ops);
CREATE INDEX users_updated_at_idx ON users (updated_at);
CREATE INDEX users_last_login_idx ON users (last_login);
