//! Simulated serial boards: a pseudo-terminal that behaves like a DIY, DGT or ChessLink board,
//! answers the host's commands, and plays a game with human timing once the host has connected.
