"""The referee's local web dashboard: live table, announcements, recording, dispute replay."""
