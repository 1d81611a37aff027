//! The `ktune` command end to end, in one test binary (linked once): `space`, `bench`,
//! `tune` with real programs compiled by gcc, shared studies of many workers on SQLite and
//! PostgreSQL, the CUDA runner where a GPU is or is not there, and the OpenCL runner on PoCL.

mod bench;
mod common;
mod cuda;
mod dashboard;
mod export;
mod objectives;
mod opencl;
mod report;
mod results;
mod space;
mod tune;
mod workers;
