//! prex's command language and session.
