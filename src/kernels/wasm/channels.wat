;; float32-in BatchNorm and GroupNorm over a shared memory: a BatchNorm block's per-channel
;; statistics, the per-channel output pass, and GroupNorm's rows.
;;
;; pointers are byte offsets into the imported memory, at any alignment; shift, factor and bias
;; (BatchNorm) and scale and bias (GroupNorm) hold one float64 per channel. A BatchNorm input is
;; [outer, C, inner] (C on channel_axis); a block is outer indexes [o0, o1) × channels [c0, c1),
;; and no byte outside it is read or written in x and y.
;;
;; numerics, statistics: float32 values promoted exactly to float64 and summed in float64 (four
;; f64x2 chains per sum; channels last, a chain per channel down a tile of rows, the tiles' sums
;; added in order), so squares of 1e±30 stay in range. A first pass per block (row) sums x and x²:
;; μ = Σx/n and M2 = Σx² - Σx·μ, which cancels by μ²/(M2/n). Where that passes 2^10 (a mean more
;; than 32 spreads from 0), more than 10 of float64's 53 bits are gone, and the channel (row) is
;; summed again as d = x - μ: μ' = μ + Σd/n, M2 = Σd² - Σd·(Σd/n) with Σd tiny, as norm.wat's
;; LayerNorm does past 2^10 (channels last, its eight channels swept again, from cache). So never
;; E[x²] - E[x]² where it would cancel; without the subtraction the first pass takes 0.21 ns a
;; value instead of 0.29. Blocks hold at most 2^16 values (channel-blocks.ts) and JS merges them
;; pairwise, so M up to 2^24 loses about 2^-30 relative at worst. Every sum runs over its block
;; (row) alone, in an order fixed by the shape: the same bits whichever task or thread runs it.
;;
;; numerics, output: in float32, y = ((x - μhi) - μlo)·a + β, μhi = μ rounded to float32 and
;; μlo the rest, a = r·γ and β rounded to float32, as norm.wat's output: x - μ carries at most 4u
;; of relative error (u = 2^-24; exact near μ by Sterbenz, and |μ - μhi| ≤ |x - μ| for every
;; float32 x), a and the product add 2u, so |y - ref| ≤ 7u·|y| + 7u·|β|: within the contract's
;; 1e-5 + 1e-5·|y| when |β| ≤ 16. A channel (BatchNorm) or run (GroupNorm) whose |β| is larger,
;; whose |a| leaves [2^-100, 2^100] (float32's comfortable range) or |μ| passes 2^120, gets the
;; float64 output (x - μ)·a + β rounded once, as store-channels.ts computes it ($fits here;
;; channels last, channel-params.ts marks such a channel with a = NaN). So does a run (row, channels
;; last) whose float32 y holds NaN or ±Inf: x itself, or x - μ or the product past float32's range
;; where float64 stays finite. Each run's (row's) bytes depend on its own values only.
(module
  (import "env" "memory" (memory 1 65536 shared))
  ;; $across8About's eight shifts as float64, per instance (so per thread): read from here each
  ;; row, the loop took a fifth less time than with them in locals, which the compiler converted
  ;; again from float32 every row for want of registers
  (global $s0 (mut v128) (v128.const i64x2 0 0))
  (global $s1 (mut v128) (v128.const i64x2 0 0))
  (global $s2 (mut v128) (v128.const i64x2 0 0))
  (global $s3 (mut v128) (v128.const i64x2 0 0))

  (func $lanes (param $v v128) (result f64)
    (f64.add (f64x2.extract_lane 0 (local.get $v)) (f64x2.extract_lane 1 (local.get $v))))

  ;; (Σd, Σd²) with d = z - shift over the n float32 at z: 8 a step in four chains per sum
  (func $deviations (param $z i32) (param $n i32) (param $shift f64) (result f64 f64)
    (local $end i32) (local $tail i32) (local $c v128) (local $d v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local $q0 v128) (local $q1 v128) (local $q2 v128) (local $q3 v128) (local $s f64) (local $q f64) (local $e f64)
    (local.set $c (f64x2.splat (local.get $shift)))
    (local.set $tail (i32.add (local.get $z) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $end (i32.add (local.get $z) (i32.shl (i32.and (local.get $n) (i32.const -8)) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $z) (local.get $end)))
        (local.set $d (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero align=1 (local.get $z))) (local.get $c)))
        (local.set $a0 (f64x2.add (local.get $a0) (local.get $d)))
        (local.set $q0 (f64x2.add (local.get $q0) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $d (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 align=1 (local.get $z))) (local.get $c)))
        (local.set $a1 (f64x2.add (local.get $a1) (local.get $d)))
        (local.set $q1 (f64x2.add (local.get $q1) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $d (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero offset=16 align=1 (local.get $z))) (local.get $c)))
        (local.set $a2 (f64x2.add (local.get $a2) (local.get $d)))
        (local.set $q2 (f64x2.add (local.get $q2) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $d (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero offset=24 align=1 (local.get $z))) (local.get $c)))
        (local.set $a3 (f64x2.add (local.get $a3) (local.get $d)))
        (local.set $q3 (f64x2.add (local.get $q3) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $z (i32.add (local.get $z) (i32.const 32)))
        (br $next)))
    (local.set $s (call $lanes (f64x2.add (f64x2.add (local.get $a0) (local.get $a1)) (f64x2.add (local.get $a2) (local.get $a3)))))
    (local.set $q (call $lanes (f64x2.add (f64x2.add (local.get $q0) (local.get $q1)) (f64x2.add (local.get $q2) (local.get $q3)))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $z) (local.get $tail)))
        (local.set $e (f64.sub (f64.promote_f32 (f32.load align=1 (local.get $z))) (local.get $shift)))
        (local.set $s (f64.add (local.get $s) (local.get $e)))
        (local.set $q (f64.add (local.get $q) (f64.mul (local.get $e) (local.get $e))))
        (local.set $z (i32.add (local.get $z) (i32.const 4)))
        (br $next)))
    (local.get $s) (local.get $q))

  ;; (Σx, Σx²) over the n float32 at z, as $deviations about 0
  (func $moments (param $z i32) (param $n i32) (result f64 f64)
    (local $end i32) (local $tail i32) (local $c v128) (local $d v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local $q0 v128) (local $q1 v128) (local $q2 v128) (local $q3 v128) (local $s f64) (local $q f64) (local $e f64)
        (local.set $tail (i32.add (local.get $z) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $end (i32.add (local.get $z) (i32.shl (i32.and (local.get $n) (i32.const -8)) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $z) (local.get $end)))
        (local.set $d (f64x2.promote_low_f32x4 (v128.load64_zero align=1 (local.get $z))))
        (local.set $a0 (f64x2.add (local.get $a0) (local.get $d)))
        (local.set $q0 (f64x2.add (local.get $q0) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $d (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 align=1 (local.get $z))))
        (local.set $a1 (f64x2.add (local.get $a1) (local.get $d)))
        (local.set $q1 (f64x2.add (local.get $q1) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $d (f64x2.promote_low_f32x4 (v128.load64_zero offset=16 align=1 (local.get $z))))
        (local.set $a2 (f64x2.add (local.get $a2) (local.get $d)))
        (local.set $q2 (f64x2.add (local.get $q2) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $d (f64x2.promote_low_f32x4 (v128.load64_zero offset=24 align=1 (local.get $z))))
        (local.set $a3 (f64x2.add (local.get $a3) (local.get $d)))
        (local.set $q3 (f64x2.add (local.get $q3) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $z (i32.add (local.get $z) (i32.const 32)))
        (br $next)))
    (local.set $s (call $lanes (f64x2.add (f64x2.add (local.get $a0) (local.get $a1)) (f64x2.add (local.get $a2) (local.get $a3)))))
    (local.set $q (call $lanes (f64x2.add (f64x2.add (local.get $q0) (local.get $q1)) (f64x2.add (local.get $q2) (local.get $q3)))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $z) (local.get $tail)))
        (local.set $e (f64.promote_f32 (f32.load align=1 (local.get $z))))
        (local.set $s (f64.add (local.get $s) (local.get $e)))
        (local.set $q (f64.add (local.get $q) (f64.mul (local.get $e) (local.get $e))))
        (local.set $z (i32.add (local.get $z) (i32.const 4)))
        (br $next)))
    (local.get $s) (local.get $q))

  ;; channels last (inner 1): channels [k, k + 8) of `rows` rows from x, `stride` bytes apart;
  ;; adds each channel's (Σx, Σx²) to its pair at p (16 bytes each)
  (func $across8 (param $x i32) (param $stride i32) (param $rows i32) (param $p i32)
    (local $end i32) (local $d v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local $q0 v128) (local $q1 v128) (local $q2 v128) (local $q3 v128)
    (local.set $end (i32.add (local.get $x) (i32.mul (local.get $rows) (local.get $stride))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $x) (local.get $end)))
        (local.set $d (f64x2.promote_low_f32x4 (v128.load64_zero align=1 (local.get $x))))
        (local.set $a0 (f64x2.add (local.get $a0) (local.get $d)))
        (local.set $q0 (f64x2.add (local.get $q0) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $d (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 align=1 (local.get $x))))
        (local.set $a1 (f64x2.add (local.get $a1) (local.get $d)))
        (local.set $q1 (f64x2.add (local.get $q1) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $d (f64x2.promote_low_f32x4 (v128.load64_zero offset=16 align=1 (local.get $x))))
        (local.set $a2 (f64x2.add (local.get $a2) (local.get $d)))
        (local.set $q2 (f64x2.add (local.get $q2) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $d (f64x2.promote_low_f32x4 (v128.load64_zero offset=24 align=1 (local.get $x))))
        (local.set $a3 (f64x2.add (local.get $a3) (local.get $d)))
        (local.set $q3 (f64x2.add (local.get $q3) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $x (i32.add (local.get $x) (local.get $stride)))
        (br $next)))
    ;; [Σd, Σd²] of channel k + j is lane j mod 2 of a(j/2) and q(j/2)
    (call $addPairs (local.get $p) (local.get $a0) (local.get $q0))
    (call $addPairs (i32.add (local.get $p) (i32.const 32)) (local.get $a1) (local.get $q1))
    (call $addPairs (i32.add (local.get $p) (i32.const 64)) (local.get $a2) (local.get $q2))
    (call $addPairs (i32.add (local.get $p) (i32.const 96)) (local.get $a3) (local.get $q3)))

  ;; as $across8, (Σd, Σd²) with d = x - the channel's shift in $s0 … $s3
  (func $across8About (param $x i32) (param $stride i32) (param $rows i32) (param $p i32)
    (local $end i32) (local $d v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local $q0 v128) (local $q1 v128) (local $q2 v128) (local $q3 v128)
    (local.set $end (i32.add (local.get $x) (i32.mul (local.get $rows) (local.get $stride))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $x) (local.get $end)))
        (local.set $d (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero align=1 (local.get $x))) (global.get $s0)))
        (local.set $a0 (f64x2.add (local.get $a0) (local.get $d)))
        (local.set $q0 (f64x2.add (local.get $q0) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $d (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 align=1 (local.get $x))) (global.get $s1)))
        (local.set $a1 (f64x2.add (local.get $a1) (local.get $d)))
        (local.set $q1 (f64x2.add (local.get $q1) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $d (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero offset=16 align=1 (local.get $x))) (global.get $s2)))
        (local.set $a2 (f64x2.add (local.get $a2) (local.get $d)))
        (local.set $q2 (f64x2.add (local.get $q2) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $d (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero offset=24 align=1 (local.get $x))) (global.get $s3)))
        (local.set $a3 (f64x2.add (local.get $a3) (local.get $d)))
        (local.set $q3 (f64x2.add (local.get $q3) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $x (i32.add (local.get $x) (local.get $stride)))
        (br $next)))
    ;; [Σd, Σd²] of channel k + j is lane j mod 2 of a(j/2) and q(j/2)
    (call $addPairs (local.get $p) (local.get $a0) (local.get $q0))
    (call $addPairs (i32.add (local.get $p) (i32.const 32)) (local.get $a1) (local.get $q1))
    (call $addPairs (i32.add (local.get $p) (i32.const 64)) (local.get $a2) (local.get $q2))
    (call $addPairs (i32.add (local.get $p) (i32.const 96)) (local.get $a3) (local.get $q3)))

  ;; reads one value of each 64-byte line of [x, x + bytes) in order, so that the sweeps down a
  ;; tile's columns find it in cache: their strided first reads from memory took twice as long.
  ;; The loads may trap, so the compiler keeps them although their value is unused.
  (func $touch (param $x i32) (param $bytes i32)
    (local $end i32) (local $v i32)
    (local.set $end (i32.add (local.get $x) (local.get $bytes)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $x) (local.get $end)))
        (local.set $v (i32.or (local.get $v) (i32.load8_u (local.get $x))))
        (local.set $x (i32.add (local.get $x) (i32.const 64)))
        (br $next))))

  (func $addPairs (param $p i32) (param $a v128) (param $q v128)
    (v128.store align=8 (local.get $p) (f64x2.add (v128.load align=8 (local.get $p))
      (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $a) (local.get $q))))
    (v128.store offset=16 align=8 (local.get $p) (f64x2.add (v128.load offset=16 align=8 (local.get $p))
      (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $a) (local.get $q)))))

  ;; (Σd, Σd²) at p, about shift, over count values → (μ, M2) there; whether the difference
  ;; cancelled more than 2^10 (see the top). Rounding can leave M2 a hair below 0 for a constant
  ;; channel; max(0, ·) keeps NaN.
  (func $finish (param $p i32) (param $count f64) (param $shift f64) (result i32)
    (local $sd f64) (local $dm f64) (local $s f64)
    (local.set $sd (f64.load (local.get $p)))
    (local.set $dm (f64.div (local.get $sd) (local.get $count)))
    (local.set $s (f64.max (f64.const 0) (f64.sub (f64.load offset=8 (local.get $p)) (f64.mul (local.get $sd) (local.get $dm)))))
    (f64.store (local.get $p) (f64.add (local.get $shift) (local.get $dm)))
    (f64.store offset=8 (local.get $p) (local.get $s))
    (f64.gt (f64.mul (local.get $dm) (local.get $dm)) (f64.mul (f64.const 1024) (f64.div (local.get $s) (local.get $count)))))

  ;; channels last: $across8About for channels [k, k + 8) of rows [0, rows) from first, in tiles
  ;; of `tile` rows, as the first sweep went
  (func $sweepAbout8 (param $first i32) (param $k i32) (param $rowBytes i32) (param $rows i32) (param $tile i32) (param $out i32)
    (local $o i32)
    (block $tiles
      (loop $tileLoop
        (br_if $tiles (i32.ge_u (local.get $o) (local.get $rows)))
        (call $across8About (i32.add (i32.add (local.get $first) (i32.mul (local.get $o) (local.get $rowBytes))) (i32.shl (local.get $k) (i32.const 2)))
          (local.get $rowBytes)
          (select (local.get $tile) (i32.sub (local.get $rows) (local.get $o)) (i32.le_u (i32.add (local.get $o) (local.get $tile)) (local.get $rows)))
          (i32.add (local.get $out) (i32.shl (local.get $k) (i32.const 4))))
        (local.set $o (i32.add (local.get $o) (local.get $tile)))
        (br $tileLoop))))

  ;; one BatchNorm block's statistics: for each channel c0 + k, its mean and M2 over the block as
  ;; two float64 at out + 16·k, which hold (Σd, Σd²) until $finish turns them over
  (func (export "tileStatsF32")
    (param $x i32) (param $out i32) (param $C i32) (param $inner i32) (param $o0 i32) (param $o1 i32) (param $c0 i32) (param $c1 i32)
    (local $width i32) (local $rowBytes i32) (local $first i32) (local $run i32) (local $rows i32) (local $o i32) (local $k i32)
    (local $j i32) (local $p i32) (local $tile i32) (local $n i32) (local $redo i32)
    (local $count f64) (local $sd f64) (local $sq f64) (local $mu f64)
    (local.set $width (i32.sub (local.get $c1) (local.get $c0)))
    (local.set $rows (i32.sub (local.get $o1) (local.get $o0)))
    (local.set $rowBytes (i32.shl (i32.mul (local.get $C) (local.get $inner)) (i32.const 2)))
    (local.set $run (i32.shl (local.get $inner) (i32.const 2)))
    ;; x at (o0, c0, 0)
    (local.set $first (i32.add (local.get $x) (i32.add (i32.mul (local.get $o0) (local.get $rowBytes))
      (i32.mul (local.get $c0) (local.get $run)))))
    (local.set $count (f64.convert_i32_u (i32.mul (local.get $rows) (local.get $inner))))
    (memory.fill (local.get $out) (i32.const 0) (i32.shl (local.get $width) (i32.const 4)))
    (if (i32.eq (local.get $inner) (i32.const 1))
      (then
        ;; channels last: tiles of about 16 KiB of rows, each read in order, then swept down eight
        ;; channels at a time (the rest one by one, below)
        (local.set $tile (select (i32.div_u (i32.const 4096) (local.get $width)) (i32.const 1) (i32.lt_u (local.get $width) (i32.const 4096))))
        (block $tiles
          (loop $tileLoop
            (br_if $tiles (i32.ge_u (local.get $o) (local.get $rows)))
            (local.set $n (select (local.get $tile) (i32.sub (local.get $rows) (local.get $o))
              (i32.le_u (i32.add (local.get $o) (local.get $tile)) (local.get $rows))))
            (local.set $p (i32.add (local.get $first) (i32.mul (local.get $o) (local.get $rowBytes))))
            (call $touch (local.get $p) (i32.mul (local.get $n) (local.get $rowBytes)))
            (local.set $k (i32.const 0))
            (block $done
              (loop $next
                (br_if $done (i32.gt_u (i32.add (local.get $k) (i32.const 8)) (local.get $width)))
                (call $across8 (i32.add (local.get $p) (i32.shl (local.get $k) (i32.const 2))) (local.get $rowBytes) (local.get $n)
                  (i32.add (local.get $out) (i32.shl (local.get $k) (i32.const 4))))
                (local.set $k (i32.add (local.get $k) (i32.const 8)))
                (br $next)))
            (local.set $o (i32.add (local.get $o) (local.get $tile)))
            (br $tileLoop)))
        ;; each eight finished; where one needs it, the eight are swept again about their μ
        (local.set $k (i32.const 0))
        (block $done
          (loop $next
            (br_if $done (i32.gt_u (i32.add (local.get $k) (i32.const 8)) (local.get $width)))
            (local.set $p (i32.add (local.get $out) (i32.shl (local.get $k) (i32.const 4))))
            (local.set $redo (i32.const 0))
            (local.set $j (i32.const 0))
            (block $each
              (loop $chan
                (br_if $each (i32.ge_u (local.get $j) (i32.const 8)))
                (local.set $redo (i32.or (local.get $redo)
                  (call $finish (i32.add (local.get $p) (i32.shl (local.get $j) (i32.const 4))) (local.get $count) (f64.const 0))))
                (local.set $j (i32.add (local.get $j) (i32.const 1)))
                (br $chan)))
            (if (local.get $redo)
              (then
                (global.set $s0 (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (v128.load (local.get $p)) (v128.load offset=16 (local.get $p))))
                (global.set $s1 (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (v128.load offset=32 (local.get $p)) (v128.load offset=48 (local.get $p))))
                (global.set $s2 (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (v128.load offset=64 (local.get $p)) (v128.load offset=80 (local.get $p))))
                (global.set $s3 (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (v128.load offset=96 (local.get $p)) (v128.load offset=112 (local.get $p))))
                (memory.fill (local.get $p) (i32.const 0) (i32.const 128))
                (call $sweepAbout8 (local.get $first) (local.get $k) (local.get $rowBytes) (local.get $rows) (local.get $tile) (local.get $out))
                (drop (call $finish (local.get $p) (local.get $count) (f64x2.extract_lane 0 (global.get $s0))))
                (drop (call $finish (i32.add (local.get $p) (i32.const 16)) (local.get $count) (f64x2.extract_lane 1 (global.get $s0))))
                (drop (call $finish (i32.add (local.get $p) (i32.const 32)) (local.get $count) (f64x2.extract_lane 0 (global.get $s1))))
                (drop (call $finish (i32.add (local.get $p) (i32.const 48)) (local.get $count) (f64x2.extract_lane 1 (global.get $s1))))
                (drop (call $finish (i32.add (local.get $p) (i32.const 64)) (local.get $count) (f64x2.extract_lane 0 (global.get $s2))))
                (drop (call $finish (i32.add (local.get $p) (i32.const 80)) (local.get $count) (f64x2.extract_lane 1 (global.get $s2))))
                (drop (call $finish (i32.add (local.get $p) (i32.const 96)) (local.get $count) (f64x2.extract_lane 0 (global.get $s3))))
                (drop (call $finish (i32.add (local.get $p) (i32.const 112)) (local.get $count) (f64x2.extract_lane 1 (global.get $s3))))))
            (local.set $k (i32.add (local.get $k) (i32.const 8)))
            (br $next)))
        ;; the rest, one by one
        (local.set $j (local.get $k))
        (block $done
          (loop $next
            (br_if $done (i32.ge_u (local.get $j) (local.get $width)))
            (call $channelSums (local.get $first) (local.get $j) (local.get $rowBytes) (local.get $run) (local.get $inner) (local.get $rows) (f64.const 0))
            (local.set $sq)
            (local.set $sd)
            (local.set $p (i32.add (local.get $out) (i32.shl (local.get $j) (i32.const 4))))
            (f64.store (local.get $p) (local.get $sd))
            (f64.store offset=8 (local.get $p) (local.get $sq))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $next))))
      (else
        ;; runs of `inner` values, in memory order
        (block $rowsDone
          (loop $row
            (br_if $rowsDone (i32.ge_u (local.get $o) (local.get $rows)))
            (local.set $j (i32.const 0))
            (block $done
              (loop $next
                (br_if $done (i32.ge_u (local.get $j) (local.get $width)))
                (call $moments (i32.add (local.get $first) (i32.add (i32.mul (local.get $o) (local.get $rowBytes)) (i32.mul (local.get $j) (local.get $run))))
                  (local.get $inner))
                (local.set $sq)
                (local.set $sd)
                (local.set $p (i32.add (local.get $out) (i32.shl (local.get $j) (i32.const 4))))
                (f64.store (local.get $p) (f64.add (f64.load (local.get $p)) (local.get $sd)))
                (f64.store offset=8 (local.get $p) (f64.add (f64.load offset=8 (local.get $p)) (local.get $sq)))
                (local.set $j (i32.add (local.get $j) (i32.const 1)))
                (br $next)))
            (local.set $o (i32.add (local.get $o) (i32.const 1)))
            (br $row)))))
    ;; channels [k, width) one by one (k = 0 for runs): finished, and summed again about μ where needed
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $k) (local.get $width)))
        (local.set $p (i32.add (local.get $out) (i32.shl (local.get $k) (i32.const 4))))
        (if (call $finish (local.get $p) (local.get $count) (f64.const 0))
          (then
            (local.set $mu (f64.load (local.get $p)))
            (call $channelSums (local.get $first) (local.get $k) (local.get $rowBytes) (local.get $run) (local.get $inner) (local.get $rows)
              (local.get $mu))
            (local.set $sq)
            (local.set $sd)
            (f64.store (local.get $p) (local.get $sd))
            (f64.store offset=8 (local.get $p) (local.get $sq))
            (drop (call $finish (local.get $p) (local.get $count) (local.get $mu)))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $next))))

  ;; (Σd, Σd²) of channel k of a block, `rows` runs of `inner` values `rowBytes` apart from
  ;; first + k·run, about shift
  (func $channelSums (param $first i32) (param $k i32) (param $rowBytes i32) (param $run i32) (param $inner i32)
    (param $rows i32) (param $shift f64) (result f64 f64)
    (local $z i32) (local $end i32) (local $sd f64) (local $sq f64)
    (local.set $z (i32.add (local.get $first) (i32.mul (local.get $k) (local.get $run))))
    (local.set $end (i32.add (local.get $z) (i32.mul (local.get $rows) (local.get $rowBytes))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $z) (local.get $end)))
        (call $deviations (local.get $z) (local.get $inner) (local.get $shift))
        (local.set $sq (f64.add (local.get $sq)))
        (local.set $sd (f64.add (local.get $sd)))
        (local.set $z (i32.add (local.get $z) (local.get $rowBytes)))
        (br $next)))
    (local.get $sd) (local.get $sq))

  ;; y = (x - μ)·a + β over n float32, rounded once to float32 (see the top); 8 a step
  (func $applyRun (param $x i32) (param $y i32) (param $n i32) (param $mu f64) (param $a f64) (param $b f64)
    (local $end i32) (local $tail i32) (local $m v128) (local $k v128) (local $c v128) (local $v v128)
    (local.set $m (f64x2.splat (local.get $mu)))
    (local.set $k (f64x2.splat (local.get $a)))
    (local.set $c (f64x2.splat (local.get $b)))
    (local.set $tail (i32.add (local.get $x) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $end (i32.add (local.get $x) (i32.shl (i32.and (local.get $n) (i32.const -4)) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $x) (local.get $end)))
        (local.set $v (v128.load align=1 (local.get $x)))
        (v128.store align=1 (local.get $y)
          (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23
            (f32x4.demote_f64x2_zero (f64x2.add (f64x2.mul (f64x2.sub (f64x2.promote_low_f32x4 (local.get $v)) (local.get $m)) (local.get $k)) (local.get $c)))
            (f32x4.demote_f64x2_zero (f64x2.add (f64x2.mul (f64x2.sub (f64x2.promote_low_f32x4
              (i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15 (local.get $v) (local.get $v))) (local.get $m)) (local.get $k)) (local.get $c)))))
        (local.set $x (i32.add (local.get $x) (i32.const 16)))
        (local.set $y (i32.add (local.get $y) (i32.const 16)))
        (br $next)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $x) (local.get $tail)))
        (f32.store align=1 (local.get $y) (f32.demote_f64 (f64.add (f64.mul (f64.sub (f64.promote_f32 (f32.load align=1 (local.get $x)))
          (local.get $mu)) (local.get $a)) (local.get $b))))
        (local.set $x (i32.add (local.get $x) (i32.const 4)))
        (local.set $y (i32.add (local.get $y) (i32.const 4)))
        (br $next))))

  ;; channels last: y[k] = (x[k] - μ[k])·a[k] + β[k] over n channels, parameters at mu, a, b
  (func $applyAcross (param $x i32) (param $y i32) (param $n i32) (param $mu i32) (param $a i32) (param $b i32)
    (local $end i32) (local $tail i32) (local $v v128)
    (local.set $tail (i32.add (local.get $x) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $end (i32.add (local.get $x) (i32.shl (i32.and (local.get $n) (i32.const -4)) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $x) (local.get $end)))
        (local.set $v (v128.load align=1 (local.get $x)))
        (v128.store align=1 (local.get $y)
          (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23
            (f32x4.demote_f64x2_zero (f64x2.add (f64x2.mul (f64x2.sub (f64x2.promote_low_f32x4 (local.get $v))
              (v128.load align=8 (local.get $mu))) (v128.load align=8 (local.get $a))) (v128.load align=8 (local.get $b))))
            (f32x4.demote_f64x2_zero (f64x2.add (f64x2.mul (f64x2.sub (f64x2.promote_low_f32x4
              (i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15 (local.get $v) (local.get $v)))
              (v128.load offset=16 align=8 (local.get $mu))) (v128.load offset=16 align=8 (local.get $a))) (v128.load offset=16 align=8 (local.get $b))))))
        (local.set $x (i32.add (local.get $x) (i32.const 16)))
        (local.set $y (i32.add (local.get $y) (i32.const 16)))
        (local.set $mu (i32.add (local.get $mu) (i32.const 32)))
        (local.set $a (i32.add (local.get $a) (i32.const 32)))
        (local.set $b (i32.add (local.get $b) (i32.const 32)))
        (br $next)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $x) (local.get $tail)))
        (f32.store align=1 (local.get $y) (f32.demote_f64 (f64.add (f64.mul (f64.sub (f64.promote_f32 (f32.load align=1 (local.get $x)))
          (f64.load (local.get $mu))) (f64.load (local.get $a))) (f64.load (local.get $b)))))
        (local.set $x (i32.add (local.get $x) (i32.const 4)))
        (local.set $y (i32.add (local.get $y) (i32.const 4)))
        (local.set $mu (i32.add (local.get $mu) (i32.const 8)))
        (local.set $a (i32.add (local.get $a) (i32.const 8)))
        (local.set $b (i32.add (local.get $b) (i32.const 8)))
        (br $next))))

;; whether a run may take the float32 output (see the top); NaN fails
  (func $fits (param $mu f64) (param $a f64) (param $b f64) (result i32)
    (i32.and
      (i32.and (f64.le (f64.abs (local.get $mu)) (f64.const 0x1p120)) (f64.le (f64.abs (local.get $b)) (f64.const 16)))
      (i32.and (f64.ge (f64.abs (local.get $a)) (f64.const 0x1p-100)) (f64.le (f64.abs (local.get $a)) (f64.const 0x1p100)))))

  ;; y = ((x - μhi) - μlo)·a + β in float32 over n values, 8 a step; 0 when some y is NaN or ±Inf
  ;; (x - x is +0 for finite x, NaN otherwise: or-ed into $bad)
  (func $applyRun32 (param $x i32) (param $y i32) (param $n i32) (param $muHi f32) (param $muLo f32) (param $a f32) (param $b f32)
    (result i32)
    (local $end i32) (local $tail i32) (local $mh v128) (local $ml v128) (local $k v128) (local $c v128) (local $o v128) (local $bad v128)
    (local $f f32)
    (local.set $mh (f32x4.splat (local.get $muHi)))
    (local.set $ml (f32x4.splat (local.get $muLo)))
    (local.set $k (f32x4.splat (local.get $a)))
    (local.set $c (f32x4.splat (local.get $b)))
    (local.set $tail (i32.add (local.get $x) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $end (i32.add (local.get $x) (i32.shl (i32.and (local.get $n) (i32.const -8)) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $x) (local.get $end)))
        (local.set $o (f32x4.add (f32x4.mul (f32x4.sub (f32x4.sub (v128.load align=1 (local.get $x)) (local.get $mh)) (local.get $ml))
          (local.get $k)) (local.get $c)))
        (v128.store align=1 (local.get $y) (local.get $o))
        (local.set $bad (v128.or (local.get $bad) (f32x4.sub (local.get $o) (local.get $o))))
        (local.set $o (f32x4.add (f32x4.mul (f32x4.sub (f32x4.sub (v128.load offset=16 align=1 (local.get $x)) (local.get $mh)) (local.get $ml))
          (local.get $k)) (local.get $c)))
        (v128.store offset=16 align=1 (local.get $y) (local.get $o))
        (local.set $bad (v128.or (local.get $bad) (f32x4.sub (local.get $o) (local.get $o))))
        (local.set $x (i32.add (local.get $x) (i32.const 32)))
        (local.set $y (i32.add (local.get $y) (i32.const 32)))
        (br $next)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $x) (local.get $tail)))
        (local.set $f (f32.add (f32.mul (f32.sub (f32.sub (f32.load align=1 (local.get $x)) (local.get $muHi)) (local.get $muLo))
          (local.get $a)) (local.get $b)))
        (f32.store align=1 (local.get $y) (local.get $f))
        (local.set $bad (v128.or (local.get $bad) (f32x4.splat (f32.sub (local.get $f) (local.get $f)))))
        (local.set $x (i32.add (local.get $x) (i32.const 4)))
        (local.set $y (i32.add (local.get $y) (i32.const 4)))
        (br $next)))
    (i32.eqz (v128.any_true (local.get $bad))))

;; channels last: $applyRun32 over `rows` rows of n channels, `stride` bytes apart, each channel
  ;; with its own parameters, prepared by channel-params.ts in groups of four, [μhi ×4][μlo ×4]
  ;; [a ×4][β ×4], from p (channel 0 of a group). A row whose y is not all finite is written again
  ;; by $applyAcross (float64), with the parameters at mu, a and b. One call per block: a call per
  ;; row of 64 channels cost a third of the time.
  (func $applyRows32 (param $x i32) (param $y i32) (param $rows i32) (param $stride i32) (param $n i32) (param $p i32)
    (param $mu i32) (param $a i32) (param $b i32)
    (local $end i32) (local $tail i32) (local $last i32) (local $xi i32) (local $yi i32) (local $pi i32) (local $q i32) (local $k i32)
    (local $o v128) (local $bad v128) (local $f f32)
    (local.set $last (i32.add (local.get $x) (i32.mul (local.get $rows) (local.get $stride))))
    (block $rowsDone
      (loop $row
        (br_if $rowsDone (i32.ge_u (local.get $x) (local.get $last)))
        (local.set $xi (local.get $x))
        (local.set $yi (local.get $y))
        (local.set $pi (local.get $p))
        (local.set $bad (v128.const i64x2 0 0))
        (local.set $tail (i32.add (local.get $x) (i32.shl (local.get $n) (i32.const 2))))
        (local.set $end (i32.add (local.get $x) (i32.shl (i32.and (local.get $n) (i32.const -4)) (i32.const 2))))
        (block $done
          (loop $next
            (br_if $done (i32.ge_u (local.get $xi) (local.get $end)))
            (local.set $o (f32x4.add (f32x4.mul (f32x4.sub (f32x4.sub (v128.load align=1 (local.get $xi)) (v128.load align=4 (local.get $pi)))
              (v128.load offset=16 align=4 (local.get $pi))) (v128.load offset=32 align=4 (local.get $pi))) (v128.load offset=48 align=4 (local.get $pi))))
            (v128.store align=1 (local.get $yi) (local.get $o))
            (local.set $bad (v128.or (local.get $bad) (f32x4.sub (local.get $o) (local.get $o))))
            (local.set $xi (i32.add (local.get $xi) (i32.const 16)))
            (local.set $yi (i32.add (local.get $yi) (i32.const 16)))
            (local.set $pi (i32.add (local.get $pi) (i32.const 64)))
            (br $next)))
        ;; the last group's first channels, one by one
        (local.set $k (i32.const 0))
        (block $done
          (loop $next
            (br_if $done (i32.ge_u (local.get $xi) (local.get $tail)))
            (local.set $q (i32.add (local.get $pi) (i32.shl (local.get $k) (i32.const 2))))
            (local.set $f (f32.add (f32.mul (f32.sub (f32.sub (f32.load align=1 (local.get $xi)) (f32.load (local.get $q))) (f32.load offset=16 (local.get $q)))
              (f32.load offset=32 (local.get $q))) (f32.load offset=48 (local.get $q))))
            (f32.store align=1 (local.get $yi) (local.get $f))
            (local.set $bad (v128.or (local.get $bad) (f32x4.splat (f32.sub (local.get $f) (local.get $f)))))
            (local.set $xi (i32.add (local.get $xi) (i32.const 4)))
            (local.set $yi (i32.add (local.get $yi) (i32.const 4)))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $next)))
        (if (v128.any_true (local.get $bad))
          (then (call $applyAcross (local.get $x) (local.get $y) (local.get $n) (local.get $mu) (local.get $a) (local.get $b))))
        (local.set $x (i32.add (local.get $x) (local.get $stride)))
        (local.set $y (i32.add (local.get $y) (local.get $stride)))
        (br $row))))

  ;; one run in float32, or in float64 when it does not fit or its float32 y is not finite
  (func $applyRunChecked (param $x i32) (param $y i32) (param $n i32) (param $mu f64) (param $a f64) (param $b f64)
    (local $muHi f32)
    (local.set $muHi (f32.demote_f64 (local.get $mu)))
    (if (if (result i32) (call $fits (local.get $mu) (local.get $a) (local.get $b))
          (then (call $applyRun32 (local.get $x) (local.get $y) (local.get $n) (local.get $muHi)
            (f32.demote_f64 (f64.sub (local.get $mu) (f64.promote_f32 (local.get $muHi))))
            (f32.demote_f64 (local.get $a)) (f32.demote_f64 (local.get $b))))
          (else (i32.const 0)))
      (then (return)))
    (call $applyRun (local.get $x) (local.get $y) (local.get $n) (local.get $mu) (local.get $a) (local.get $b)))

;; one BatchNorm block's output, float32, with μ, a = r·γ and β per channel (float64, from
  ;; channel 0) and their float32 groups at prepared (channel-params.ts)
  (func (export "batchnormF32")
    (param $x i32) (param $y i32) (param $shift i32) (param $factor i32) (param $bias i32) (param $prepared i32)
    (param $C i32) (param $inner i32) (param $o0 i32) (param $o1 i32) (param $c0 i32) (param $c1 i32)
    (local $run i32) (local $rowBytes i32) (local $at i32) (local $c i32) (local $p i32)
    (local.set $run (i32.shl (local.get $inner) (i32.const 2)))
    (local.set $rowBytes (i32.mul (local.get $C) (local.get $run)))
    ;; byte offset of (o0, c0, 0)
    (local.set $at (i32.add (i32.mul (local.get $o0) (local.get $rowBytes)) (i32.mul (local.get $c0) (local.get $run))))
    (if (i32.eq (local.get $inner) (i32.const 1))
      (then
        (local.set $p (i32.shl (local.get $c0) (i32.const 3)))
        ;; the float32 groups start at c0 (blocks start at multiples of 2^16 channels); else float64
        (if (i32.eqz (i32.and (local.get $c0) (i32.const 3)))
          (then
            (call $applyRows32 (i32.add (local.get $x) (local.get $at)) (i32.add (local.get $y) (local.get $at)) (i32.sub (local.get $o1) (local.get $o0))
              (local.get $rowBytes) (i32.sub (local.get $c1) (local.get $c0)) (i32.add (local.get $prepared) (i32.shl (local.get $c0) (i32.const 4)))
              (i32.add (local.get $shift) (local.get $p)) (i32.add (local.get $factor) (local.get $p)) (i32.add (local.get $bias) (local.get $p)))
            (return)))
        (block $done
          (loop $next
            (br_if $done (i32.ge_u (local.get $o0) (local.get $o1)))
            (call $applyAcross (i32.add (local.get $x) (local.get $at)) (i32.add (local.get $y) (local.get $at)) (i32.sub (local.get $c1) (local.get $c0))
              (i32.add (local.get $shift) (local.get $p)) (i32.add (local.get $factor) (local.get $p)) (i32.add (local.get $bias) (local.get $p)))
            (local.set $at (i32.add (local.get $at) (local.get $rowBytes)))
            (local.set $o0 (i32.add (local.get $o0) (i32.const 1)))
            (br $next)))
        (return)))
    ;; runs of `inner` values, each channel's in float32 or float64 ($applyRunChecked)
    (block $rows
      (loop $row
        (br_if $rows (i32.ge_u (local.get $o0) (local.get $o1)))
        (local.set $c (local.get $c0))
        (block $done
          (loop $next
            (br_if $done (i32.ge_u (local.get $c) (local.get $c1)))
            (local.set $p (i32.shl (local.get $c) (i32.const 3)))
            (call $applyRunChecked (i32.add (local.get $x) (local.get $at)) (i32.add (local.get $y) (local.get $at)) (local.get $inner)
              (f64.load (i32.add (local.get $shift) (local.get $p))) (f64.load (i32.add (local.get $factor) (local.get $p)))
              (f64.load (i32.add (local.get $bias) (local.get $p))))
            (local.set $at (i32.add (local.get $at) (local.get $run)))
            (local.set $c (i32.add (local.get $c) (i32.const 1)))
            (br $next)))
        ;; on to (o0 + 1, c0, 0)
        (local.set $at (i32.add (local.get $at) (i32.mul (i32.sub (local.get $C) (i32.sub (local.get $c1) (local.get $c0))) (local.get $run))))
        (local.set $o0 (i32.add (local.get $o0) (i32.const 1)))
        (br $row))))

  ;; GroupNorm rows [row, rowEnd) of n float32 from x (row i at x + 4·i·n) into y: a row is
  ;; channels (row mod groups)·n/channelRun … of `channelRun` values each; μ and r as LayerNorm's
  ;; (the top's statistics), then each channel's run with a = r·γ_c and β_c (bias 0: none).
  ;; mean and rstd, when not 0, get a float32 per row.
  (func (export "groupnormF32")
    (param $x i32) (param $y i32) (param $scale i32) (param $bias i32) (param $meanOut i32) (param $rstdOut i32)
    (param $n i32) (param $channelRun i32) (param $groups i32) (param $row i32) (param $rowEnd i32) (param $eps f64)
    (local $bytes i32) (local $run i32) (local $perRow i32) (local $c i32) (local $cEnd i32) (local $at i32)
    (local $nf f64) (local $sd f64) (local $sq f64) (local $dm f64) (local $mu f64) (local $s f64) (local $r f64)
    (local.set $bytes (i32.shl (local.get $n) (i32.const 2)))
    (local.set $run (i32.shl (local.get $channelRun) (i32.const 2)))
    (local.set $perRow (i32.div_u (local.get $n) (local.get $channelRun)))
    (local.set $nf (f64.convert_i32_u (local.get $n)))
    (block $rows
      (loop $rowLoop
        (br_if $rows (i32.ge_u (local.get $row) (local.get $rowEnd)))
        (local.set $at (i32.mul (local.get $row) (local.get $bytes)))
        (local.set $mu (f64.const 0))
        (call $moments (i32.add (local.get $x) (local.get $at)) (local.get $n))
        (local.set $sq)
        (local.set $sd)
        (local.set $dm (f64.div (local.get $sd) (local.get $nf)))
        (local.set $mu (f64.add (local.get $mu) (local.get $dm)))
        (local.set $s (f64.max (f64.const 0) (f64.div (f64.sub (local.get $sq) (f64.mul (local.get $sd) (local.get $dm))) (local.get $nf))))
        (if (f64.gt (f64.mul (local.get $dm) (local.get $dm)) (f64.mul (f64.const 1024) (local.get $s)))
          (then
            (call $deviations (i32.add (local.get $x) (local.get $at)) (local.get $n) (local.get $mu))
            (local.set $sq)
            (local.set $sd)
            (local.set $dm (f64.div (local.get $sd) (local.get $nf)))
            (local.set $mu (f64.add (local.get $mu) (local.get $dm)))
            (local.set $s (f64.max (f64.const 0) (f64.div (f64.sub (local.get $sq) (f64.mul (local.get $sd) (local.get $dm))) (local.get $nf))))))
        (local.set $r (f64.div (f64.const 1) (f64.sqrt (f64.add (local.get $s) (local.get $eps)))))
        (if (local.get $meanOut)
          (then (f32.store align=1 (i32.add (local.get $meanOut) (i32.shl (local.get $row) (i32.const 2))) (f32.demote_f64 (local.get $mu)))))
        (if (local.get $rstdOut)
          (then (f32.store align=1 (i32.add (local.get $rstdOut) (i32.shl (local.get $row) (i32.const 2))) (f32.demote_f64 (local.get $r)))))
        (local.set $c (i32.mul (i32.rem_u (local.get $row) (local.get $groups)) (local.get $perRow)))
        (local.set $cEnd (i32.add (local.get $c) (local.get $perRow)))
        (block $done
          (loop $next
            (br_if $done (i32.ge_u (local.get $c) (local.get $cEnd)))
            (call $applyRunChecked (i32.add (local.get $x) (local.get $at)) (i32.add (local.get $y) (local.get $at)) (local.get $channelRun)
              (local.get $mu) (f64.mul (local.get $r) (f64.load (i32.add (local.get $scale) (i32.shl (local.get $c) (i32.const 3)))))
              (if (result f64) (local.get $bias)
                (then (f64.load (i32.add (local.get $bias) (i32.shl (local.get $c) (i32.const 3)))))
                (else (f64.const 0))))
            (local.set $at (i32.add (local.get $at) (local.get $run)))
            (local.set $c (i32.add (local.get $c) (i32.const 1)))
            (br $next)))
        (local.set $row (i32.add (local.get $row) (i32.const 1)))
        (br $rowLoop))))
)
