// The OMPT callbacks htrace registers, grouped by the file that implements them.
#pragma once

#include <omp-tools.h>

namespace htrace::ompt {

// parallel_callbacks.cpp
void on_thread_begin(ompt_thread_t type, ompt_data_t* thread_data);
void on_thread_end(ompt_data_t* thread_data);
void on_parallel_begin(ompt_data_t* encountering_task, const ompt_frame_t* frame,
                       ompt_data_t* parallel_data, unsigned int requested_parallelism, int flags,
                       const void* codeptr);
void on_parallel_end(ompt_data_t* parallel_data, ompt_data_t* encountering_task, int flags,
                     const void* codeptr);
void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data,
                      ompt_data_t* task_data, unsigned int actual_parallelism, unsigned int index,
                      int flags);

// sync_callbacks.cpp
void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                    ompt_data_t* parallel_data, ompt_data_t* task_data, const void* codeptr);
void on_work(ompt_work_t type, ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data,
             ompt_data_t* task_data, uint64_t count, const void* codeptr);
void on_masked(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel_data, ompt_data_t* task_data,
               const void* codeptr);

// mutex_callbacks.cpp
void on_mutex_acquire(ompt_mutex_t kind, unsigned int hint, unsigned int impl,
                      ompt_wait_id_t wait_id, const void* codeptr);
void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void* codeptr);
void on_mutex_released(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void* codeptr);
void on_nest_lock(ompt_scope_endpoint_t endpoint, ompt_wait_id_t wait_id, const void* codeptr);

// task_callbacks.cpp
void on_task_create(ompt_data_t* encountering_task, const ompt_frame_t* frame,
                    ompt_data_t* new_task, int flags, int has_dependences, const void* codeptr);
void on_task_schedule(ompt_data_t* prior_task, ompt_task_status_t prior_status,
                      ompt_data_t* next_task);

// closing.cpp: ends every construct still open (libomp never reports the end of a worker's last
// implicit task). Runs in the recorder's finalize, before events are written.
void close_open_constructs();
// closing.cpp: the recorder's HTRACE_BUDGET hook. Callbacks record nothing from then on; the
// constructs open at the cut are ended there by close_open_constructs().
void stop_at_budget();

} // namespace htrace::ompt
