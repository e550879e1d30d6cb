//! RPN trace programs.
