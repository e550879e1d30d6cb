//! OS/2 return codes (bseerr.h): every error code an API returns, in
//! one place.

/// No error.
pub const NO_ERROR: u32 = 0;
/// Invalid function.
pub const ERROR_INVALID_FUNCTION: u32 = 1;
/// File not found.
pub const ERROR_FILE_NOT_FOUND: u32 = 2;
/// Path not found.
pub const ERROR_PATH_NOT_FOUND: u32 = 3;
/// Too many open files.
pub const ERROR_TOO_MANY_OPEN_FILES: u32 = 4;
/// ERROR_INVALID_TARGET_HANDLE: DosDupHandle's target is past the limit.
pub const ERROR_INVALID_TARGET_HANDLE: u32 = 114;
/// Access denied.
pub const ERROR_ACCESS_DENIED: u32 = 5;
/// Invalid handle.
pub const ERROR_INVALID_HANDLE: u32 = 6;
/// Not enough memory.
pub const ERROR_NOT_ENOUGH_MEMORY: u32 = 8;
/// Invalid access code.
pub const ERROR_INVALID_ACCESS: u32 = 12;
/// Invalid data.
pub const ERROR_INVALID_DATA: u32 = 13;
/// Invalid drive.
pub const ERROR_INVALID_DRIVE: u32 = 15;
/// No more files.
pub const ERROR_NO_MORE_FILES: u32 = 18;
/// Seek error.
pub const ERROR_SEEK: u32 = 25;
/// Write fault.
pub const ERROR_WRITE_FAULT: u32 = 29;
/// Read fault.
pub const ERROR_READ_FAULT: u32 = 30;
/// Sharing violation.
pub const ERROR_SHARING_VIOLATION: u32 = 32;
/// Disk full.
pub const ERROR_DISK_FULL: u32 = 112;
/// Invalid parameter.
pub const ERROR_INVALID_PARAMETER: u32 = 87;
/// Open failed.
pub const ERROR_OPEN_FAILED: u32 = 110;
/// Buffer overflow.
pub const ERROR_BUFFER_OVERFLOW: u32 = 111;
/// Invalid name.
pub const ERROR_INVALID_NAME: u32 = 123;
/// An exclusive system semaphore is owned by another thread.
pub const ERROR_EXCL_SEM_ALREADY_OWNED: u32 = 101;
/// The semaphore is set and cannot be closed.
pub const ERROR_SEM_IS_SET: u32 = 102;
/// The name exists already.
pub const ERROR_ALREADY_EXISTS: u32 = 183;
/// Negative seek.
pub const ERROR_NEGATIVE_SEEK: u32 = 131;
/// Seek on a device or pipe.
pub const ERROR_SEEK_ON_DEVICE: u32 = 132;
/// The other end of the pipe is closed.
pub const ERROR_BROKEN_PIPE: u32 = 109;
/// Environment variable not found.
pub const ERROR_ENVVAR_NOT_FOUND: u32 = 203;
/// Filename exceeds range.
pub const ERROR_FILENAME_EXCED_RANGE: u32 = 206;
/// Invalid address.
pub const ERROR_INVALID_ADDRESS: u32 = 487;
/// ERROR_SYSTEM_TRACE: DosSysTrace's major code is not selected for tracing.
pub const ERROR_SYSTEM_TRACE: u32 = 150;
/// Code page list too small.
pub const ERROR_CPLIST_TOO_SMALL: u32 = 471;
/// Invalid selector.
pub const ERROR_INVALID_SEGMENT_NUMBER: u32 = 180;
/// Semaphore timed out (16-bit).
pub const ERROR_SEM_TIMEOUT: u32 = 121;
/// Module not found.
pub const ERROR_MOD_NOT_FOUND: u32 = 126;
/// Procedure not found.
pub const ERROR_PROC_NOT_FOUND: u32 = 127;
/// Not owner.
pub const ERROR_NOT_OWNER: u32 = 288;
/// Already posted.
pub const ERROR_ALREADY_POSTED: u32 = 299;
/// Already reset.
pub const ERROR_ALREADY_RESET: u32 = 300;
/// Wait timed out.
pub const ERROR_TIMEOUT: u32 = 640;
/// A VIO call's parameter is not valid (VioGetConfig's configuration id).
pub const ERROR_VIO_INVALID_PARMS: u32 = 421;
/// A VIO handle is not valid (non-zero from a program without a PS).
pub const ERROR_VIO_INVALID_HANDLE: u32 = 436;
/// A VIO structure's length is not valid.
pub const ERROR_VIO_INVALID_LENGTH: u32 = 438;
/// No such country code (NLS).
pub const ERROR_NLS_NO_CTRY_CODE: u32 = 398;
/// The NLS table did not fit in the buffer; the part that fits is there.
pub const ERROR_NLS_TABLE_TRUNCATED: u32 = 399;
/// No such code page.
pub const ERROR_CODE_PAGE_NOT_FOUND: u32 = 476;
/// ERROR_DOSSUB_SHRINK: DOSSUB_GROW with a smaller size.
pub const ERROR_DOSSUB_SHRINK: u32 = 310;
/// ERROR_DOSSUB_NOMEM: no free block of that size in the pool.
pub const ERROR_DOSSUB_NOMEM: u32 = 311;
/// ERROR_DOSSUB_OVERLAP: the range overlaps a pool or free space.
pub const ERROR_DOSSUB_OVERLAP: u32 = 312;
/// ERROR_DOSSUB_BADSIZE: a size of 0 or beyond the pool.
pub const ERROR_DOSSUB_BADSIZE: u32 = 313;
/// ERROR_DOSSUB_BADFLAG: an unknown flag or combination.
pub const ERROR_DOSSUB_BADFLAG: u32 = 314;
/// ERROR_MR_MSG_TOO_LONG: the message does not fit the buffer.
pub const ERROR_MR_MSG_TOO_LONG: u32 = 316;
/// ERROR_MR_MID_NOT_FOUND: no message with that number in the file.
pub const ERROR_MR_MID_NOT_FOUND: u32 = 317;
/// ERROR_MR_UN_ACC_MSGF: the message file cannot be found or read.
pub const ERROR_MR_UN_ACC_MSGF: u32 = 318;
/// ERROR_MR_INV_MSGF_FORMAT: not a message file.
pub const ERROR_MR_INV_MSGF_FORMAT: u32 = 319;
/// ERROR_MR_INV_IVCOUNT: more insertion strings than a message takes.
pub const ERROR_MR_INV_IVCOUNT: u32 = 320;
/// ERROR_NESTING_TOO_DEEP: a must-complete or focus counter at its limit.
pub const ERROR_NESTING_TOO_DEEP: u32 = 650;
/// ERROR_NOT_FROZEN: DosResumeThread on a thread that is not suspended.
pub const ERROR_NOT_FROZEN: u32 = 90;
/// ERROR_SEM_OWNER_DIED: the mutex's owner ended without releasing it.
pub const ERROR_SEM_OWNER_DIED: u32 = 105;
/// ERROR_MAX_THRDS_REACHED: no more threads.
pub const ERROR_MAX_THRDS_REACHED: u32 = 164;
/// ERROR_THREAD_NOT_TERMINATED: DosWaitThread(DCWW_NOWAIT) on a running thread.
pub const ERROR_THREAD_NOT_TERMINATED: u32 = 294;
/// ERROR_TOO_MANY_POSTS: an event semaphore's post count is at its limit.
pub const ERROR_TOO_MANY_POSTS: u32 = 298;
/// ERROR_SEM_BUSY: closing a semaphore that is owned or waited on.
pub const ERROR_SEM_BUSY: u32 = 301;
/// ERROR_TOO_MANY_SEMAPHORES: a muxwait semaphore of more than 64 records.
pub const ERROR_TOO_MANY_SEMAPHORES: u32 = 100;
/// ERROR_SEM_NOT_FOUND: no semaphore has the name.
pub const ERROR_SEM_NOT_FOUND: u32 = 187;
/// ERROR_DUPLICATE_HANDLE: a semaphore twice in one muxwait semaphore.
pub const ERROR_DUPLICATE_HANDLE: u32 = 284;
/// ERROR_DUPLICATE_NAME: a semaphore of that name exists.
pub const ERROR_DUPLICATE_NAME: u32 = 285;
/// ERROR_EMPTY_MUXWAIT: waiting on a muxwait semaphore with no records.
pub const ERROR_EMPTY_MUXWAIT: u32 = 286;
/// ERROR_PARAM_TOO_SMALL: DosQueryMuxWaitSem's array is too small.
pub const ERROR_PARAM_TOO_SMALL: u32 = 289;
/// ERROR_TOO_MANY_HANDLES: the semaphore table is full.
pub const ERROR_TOO_MANY_HANDLES: u32 = 290;
/// ERROR_TOO_MANY_OPENS: a semaphore opened 65535 times.
pub const ERROR_TOO_MANY_OPENS: u32 = 291;
/// ERROR_WRONG_TYPE: a muxwait record of the wrong kind of semaphore.
pub const ERROR_WRONG_TYPE: u32 = 292;
/// ERROR_INVALID_PCLASS: an unknown priority class.
pub const ERROR_INVALID_PCLASS: u32 = 307;
/// ERROR_INVALID_SCOPE: an unknown priority scope.
pub const ERROR_INVALID_SCOPE: u32 = 308;
/// ERROR_INVALID_THREADID: no such thread (or not one the call may name).
pub const ERROR_INVALID_THREADID: u32 = 309;
/// ERROR_CRITSEC_OVERFLOW: DosEnterCritSec nested too deep.
pub const ERROR_CRITSEC_OVERFLOW: u32 = 484;
/// ERROR_CRITSEC_UNDERFLOW: DosExitCritSec without DosEnterCritSec.
pub const ERROR_CRITSEC_UNDERFLOW: u32 = 485;
/// ERROR_TOO_MANY_SEM_REQUESTS: a mutex requested 65535 times by its owner.
pub const ERROR_TOO_MANY_SEM_REQUESTS: u32 = 103;
/// ERROR_INVALID_PDELTA: a priority delta beyond -31..31.
pub const ERROR_INVALID_PDELTA: u32 = 304;
/// ERROR_INVALID_PROCID: no such process.
pub const ERROR_INVALID_PROCID: u32 = 303;
/// ERROR_BAD_ENVIRONMENT: DosExecPgm's environment does not fit in 64 KB.
pub const ERROR_BAD_ENVIRONMENT: u32 = 10;
/// ERROR_NO_PROC_SLOTS: no more processes can be started.
pub const ERROR_NO_PROC_SLOTS: u32 = 89;
/// ERROR_WAIT_NO_CHILDREN: DosWaitChild has no child to wait for.
pub const ERROR_WAIT_NO_CHILDREN: u32 = 128;
/// ERROR_CHILD_NOT_COMPLETE: DCWW_NOWAIT and no awaited child has ended.
pub const ERROR_CHILD_NOT_COMPLETE: u32 = 129;
/// ERROR_NO_CHILD_PROCESS: the process is not a child of the caller.
pub const ERROR_NO_CHILD_PROCESS: u32 = 184;
/// ERROR_BAD_EXE_FORMAT: the program or one of its DLLs cannot be loaded.
pub const ERROR_BAD_EXE_FORMAT: u32 = 193;
/// ERROR_ZOMBIE_PROCESS: the process has ended; its codes wait for its parent.
pub const ERROR_ZOMBIE_PROCESS: u32 = 217;
/// ERROR_INIT_ROUTINE_FAILED: a DLL's initialization routine failed.
pub const ERROR_INIT_ROUTINE_FAILED: u32 = 295;
/// ERROR_NOT_DESCENDANT: the process does not descend from the caller.
pub const ERROR_NOT_DESCENDANT: u32 = 305;
/// ERROR_INSUFFICIENT_BUFFER: the buffer is smaller than the level's structure.
pub const ERROR_INSUFFICIENT_BUFFER: u32 = 122;
/// ERROR_INVALID_LEVEL: an information level the call does not have.
pub const ERROR_INVALID_LEVEL: u32 = 124;
/// ERROR_EAS_NOT_SUPPORTED: the file system keeps no extended attributes.
pub const ERROR_EAS_NOT_SUPPORTED: u32 = 282;
/// ERROR_QUE_PROC_NOT_OWNED: only the queue's owner reads, peeks and purges.
pub const ERROR_QUE_PROC_NOT_OWNED: u32 = 330;
/// ERROR_QUE_DUPLICATE: a queue of that name exists.
pub const ERROR_QUE_DUPLICATE: u32 = 332;
/// ERROR_QUE_ELEMENT_NOT_EXIST: no element with that code is in the queue.
pub const ERROR_QUE_ELEMENT_NOT_EXIST: u32 = 333;
/// ERROR_QUE_NO_MEMORY: no room for another queue or element.
pub const ERROR_QUE_NO_MEMORY: u32 = 334;
/// ERROR_QUE_INVALID_NAME: not `\QUEUES\` and a valid path.
pub const ERROR_QUE_INVALID_NAME: u32 = 335;
/// ERROR_QUE_INVALID_HANDLE: no such queue, or not opened by the caller.
pub const ERROR_QUE_INVALID_HANDLE: u32 = 337;
/// ERROR_QUE_EMPTY: DCWW_NOWAIT and nothing to read.
pub const ERROR_QUE_EMPTY: u32 = 342;
/// ERROR_QUE_NAME_NOT_EXIST: DosOpenQueue of a name no queue has.
pub const ERROR_QUE_NAME_NOT_EXIST: u32 = 343;
/// ERROR_QUE_INVALID_WAIT: a wait flag other than DCWW_WAIT and DCWW_NOWAIT.
pub const ERROR_QUE_INVALID_WAIT: u32 = 433;
