// The accumulator operands of wgmma's inline asm, written once for every wrapper (micro/tensor_sm90a.cu,
// gemm/tc_sm90a.cuh, gemm/12_wgmma_tma_sm90a.cu): an asm string must be a literal and each accumulator a
// separate "+f" operand, so the lists are macros. MH_WG_ACC<n>(d): d[0] .. d[n-1] as read-write f32
// operands; MH_WG_REGS<n>: "%0, ..., %<n-1>", the matching operand numbers inside the string.
#pragma once

#define MH_WG_F8(d, i)                                                                                          \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), \
      "+f"(d[i + 7])
#define MH_WG_ACC32(d) MH_WG_F8(d, 0), MH_WG_F8(d, 8), MH_WG_F8(d, 16), MH_WG_F8(d, 24)
#define MH_WG_ACC64(d) MH_WG_ACC32(d), MH_WG_F8(d, 32), MH_WG_F8(d, 40), MH_WG_F8(d, 48), MH_WG_F8(d, 56)
#define MH_WG_ACC128(d)                                                                                     \
  MH_WG_ACC64(d), MH_WG_F8(d, 64), MH_WG_F8(d, 72), MH_WG_F8(d, 80), MH_WG_F8(d, 88), MH_WG_F8(d, 96), \
      MH_WG_F8(d, 104), MH_WG_F8(d, 112), MH_WG_F8(d, 120)

#define MH_WG_REGS32                                                                 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, " \
  "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define MH_WG_REGS64                                                                           \
  MH_WG_REGS32 ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, " \
               "%47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define MH_WG_REGS128                                                                               \
  MH_WG_REGS64 ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
               "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "   \
               "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, "     \
               "%110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, "       \
               "%123, %124, %125, %126, %127"
