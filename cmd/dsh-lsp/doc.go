// Command dsh-lsp lets a prompt cite DeepSeek Harness (dsh) chat sessions
// with @[label](dsh-session:…) mentions. One binary serves three front ends
// over one core: the language server (serve, the default), the command line
// (prepare, candidates, search, mentions, uri, check, demo, version) and an
// MCP server for AI agents (mcp).
//
// Every front end reads the store through the session index
// (sessionstore.Indexed): serve, mcp, candidates, check and search open it
// with its cache in the user cache directory (--no-cache keeps it in
// memory), prepare opens it lazily so it parses only the sessions it cites.
// Answers come from package reference and are written with jsjson's
// encoders, so the three front ends give the same bytes.
package main
