//! Human-readable listing of bytecode (`raya disasm`).
