-- TPC-C transactions for PostgreSQL as server-side PL/pgSQL functions, one per
-- transaction, written from the TPC-C v5.11 specification, clauses 2.4-2.8
-- (New-Order, Payment, Order-Status, Delivery, Stock-Level). The client
-- generates every random input itself (warehouse, district, customer id or last
-- name, item ids, supply warehouses, quantities, amounts, carrier, threshold)
-- and calls one function per transaction in autocommit mode, so each
-- transaction costs one round trip. Needs pg_tpcc_schema.sql and the keys
-- of tpcc::KEYS (src/tpcc/mod.rs).
--
-- Locking: New-Order updates STOCK rows in (supply warehouse, item) order;
-- Payment locks the customer first and the hot district and warehouse rows
-- last; Delivery walks the districts in order. With those orders no two
-- transactions can wait on each other in a cycle.

-- New-Order (clause 2.4.2). Returns the order's id (r_o_id) and total amount
-- (r_total): the client's commit log (--commit-log) records the id. An item id that
-- does not exist raises 'storlab-tpcc: unused item <id>' (SQLSTATE P0001)
-- after the rest of the order has been processed (clause 2.4.2.3), which rolls
-- the whole transaction back.
-- An older neword returned the amount alone; a return type cannot be replaced.
DROP FUNCTION IF EXISTS neword(integer, integer, integer, integer[], integer[], integer[]);
CREATE FUNCTION neword(p_w_id integer, p_d_id integer, p_c_id integer,
    p_i_ids integer[], p_supply_w_ids integer[], p_quantities integer[],
    OUT r_o_id integer, OUT r_total numeric)
LANGUAGE plpgsql AS $$
DECLARE
  v_ol_cnt     integer := cardinality(p_i_ids);
  v_w_tax      numeric;
  v_d_tax      numeric;
  v_o_id       integer;
  v_c_discount numeric;
  v_c_last     varchar;
  v_c_credit   char(2);
  v_all_local  smallint;
  v_dist       char(24);
  v_amount     numeric;
  v_sum        numeric := 0;
  v_missing    integer;        -- ol_number of the first unused item
  v_missing_id integer;
  v_n          integer := 0;
  a_number     integer[] := '{}';
  a_i_id       integer[] := '{}';
  a_supply     integer[] := '{}';
  a_qty        integer[] := '{}';
  a_amount     numeric[] := '{}';
  a_dist       char(24)[] := '{}';
  r            record;
BEGIN
  IF v_ol_cnt IS NULL OR v_ol_cnt = 0
     OR cardinality(p_supply_w_ids) IS DISTINCT FROM v_ol_cnt
     OR cardinality(p_quantities) IS DISTINCT FROM v_ol_cnt THEN
    RAISE EXCEPTION 'storlab-tpcc: neword needs three non-empty arrays of equal length';
  END IF;

  SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w_id;

  UPDATE district SET d_next_o_id = d_next_o_id + 1
  WHERE d_w_id = p_w_id AND d_id = p_d_id
  RETURNING d_tax, d_next_o_id - 1 INTO v_d_tax, v_o_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'storlab-tpcc: no district % of warehouse %', p_d_id, p_w_id;
  END IF;

  SELECT c_discount, c_last, c_credit INTO v_c_discount, v_c_last, v_c_credit
  FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;

  v_all_local := CASE WHEN p_w_id = ALL (p_supply_w_ids) THEN 1 ELSE 0 END;

  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
  VALUES (v_o_id, p_d_id, p_w_id, p_c_id, now(), NULL, v_ol_cnt, v_all_local);
  INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id);

  -- All items in one statement; the lines come out in (supply warehouse,
  -- item) order so that every New-Order locks STOCK rows in the same order.
  FOR r IN
    SELECT l.n::integer AS n, l.i_id, l.w, l.q, i.i_price, i.i_name, i.i_data
    FROM unnest(p_i_ids, p_supply_w_ids, p_quantities) WITH ORDINALITY AS l(i_id, w, q, n)
    LEFT JOIN item i ON i.i_id = l.i_id
    ORDER BY l.w, l.i_id, l.n
  LOOP
    IF r.i_price IS NULL THEN
      IF v_missing IS NULL OR r.n < v_missing THEN
        v_missing := r.n;
        v_missing_id := r.i_id;
      END IF;
      CONTINUE;
    END IF;

    UPDATE stock SET
      s_quantity = CASE WHEN s_quantity >= r.q + 10 THEN s_quantity - r.q
                        ELSE s_quantity - r.q + 91 END,
      s_ytd = s_ytd + r.q,
      s_order_cnt = s_order_cnt + 1,
      s_remote_cnt = s_remote_cnt + CASE WHEN r.w <> p_w_id THEN 1 ELSE 0 END
    WHERE s_w_id = r.w AND s_i_id = r.i_id
    RETURNING CASE p_d_id
      WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
      WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
      WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09
      ELSE s_dist_10 END
    INTO v_dist;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'storlab-tpcc: no stock row for item % in warehouse %', r.i_id, r.w;
    END IF;

    v_amount := r.q * r.i_price;
    v_sum := v_sum + v_amount;
    v_n := v_n + 1;
    a_number[v_n] := r.n;
    a_i_id[v_n] := r.i_id;
    a_supply[v_n] := r.w;
    a_qty[v_n] := r.q;
    a_amount[v_n] := v_amount;
    a_dist[v_n] := v_dist;
  END LOOP;

  INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                          ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
  SELECT v_o_id, p_d_id, p_w_id, x.n, x.i_id, x.w, NULL, x.q, x.amount, x.dist
  FROM unnest(a_number, a_i_id, a_supply, a_qty, a_amount, a_dist) AS x(n, i_id, w, q, amount, dist)
  ORDER BY x.n;

  IF v_missing IS NOT NULL THEN
    RAISE EXCEPTION 'storlab-tpcc: unused item %', v_missing_id USING ERRCODE = 'P0001';
  END IF;

  r_o_id := v_o_id;
  r_total := round(v_sum * (1 - v_c_discount) * (1 + v_w_tax + v_d_tax), 2);
END;
$$;

-- The customer a by-name lookup selects (Payment 2.5.2.2, Order-Status
-- 2.6.2.2): position ceil(n/2) of those with this last name, ordered by first
-- name. NULL when none matches.
CREATE OR REPLACE FUNCTION customer_by_name(p_w_id integer, p_d_id integer, p_c_last varchar)
RETURNS integer LANGUAGE sql STABLE AS $$
  SELECT (array_agg(c_id ORDER BY c_first))[((count(*) + 1) / 2)::integer]
  FROM customer
  WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last
$$;

-- Payment (clause 2.5.2). Returns the customer's c_id, or 0 (and changes
-- nothing) when no customer matches.
CREATE OR REPLACE FUNCTION payment(p_w_id integer, p_d_id integer, p_c_w_id integer,
    p_c_d_id integer, p_c_id integer, p_c_last varchar, p_by_name boolean, p_h_amount numeric)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_c_id    integer := p_c_id;
  v_cust    record;
  v_dist    record;
  v_wh      record;
BEGIN
  IF p_by_name THEN
    v_c_id := customer_by_name(p_c_w_id, p_c_d_id, p_c_last);
    IF v_c_id IS NULL THEN
      RETURN 0;
    END IF;
  END IF;

  -- Customer first: the hot district and warehouse rows are locked last, so
  -- they are held for as short a time as possible.
  UPDATE customer SET
    c_balance = c_balance - p_h_amount,
    c_ytd_payment = c_ytd_payment + p_h_amount,
    c_payment_cnt = c_payment_cnt + 1,
    c_data = CASE WHEN c_credit = 'BC'
                  THEN left(format('%s %s %s %s %s %s | ', v_c_id, p_c_d_id, p_c_w_id,
                                   p_d_id, p_w_id, p_h_amount) || c_data, 500)
                  ELSE c_data END
  WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id
  RETURNING c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip,
            c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance,
            CASE WHEN c_credit = 'BC' THEN left(c_data, 200) END AS c_data
  INTO v_cust;
  IF NOT FOUND THEN
    RETURN 0;
  END IF;

  UPDATE district SET d_ytd = d_ytd + p_h_amount
  WHERE d_w_id = p_w_id AND d_id = p_d_id
  RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip INTO v_dist;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'storlab-tpcc: no district % of warehouse %', p_d_id, p_w_id;
  END IF;

  UPDATE warehouse SET w_ytd = w_ytd + p_h_amount
  WHERE w_id = p_w_id
  RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip INTO v_wh;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'storlab-tpcc: no warehouse %', p_w_id;
  END IF;

  INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
  VALUES (v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, now(), p_h_amount,
          v_wh.w_name || '    ' || v_dist.d_name);

  RETURN v_c_id;
END;
$$;

-- Order-Status (clause 2.6.2). Returns the customer's most recent o_id, or 0.
CREATE OR REPLACE FUNCTION ostat(p_w_id integer, p_d_id integer, p_c_id integer,
    p_c_last varchar, p_by_name boolean)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_c_id   integer := p_c_id;
  v_cust   record;
  v_o_id   integer;
  v_entry  timestamp;
  v_carrier smallint;
BEGIN
  IF p_by_name THEN
    v_c_id := customer_by_name(p_w_id, p_d_id, p_c_last);
    IF v_c_id IS NULL THEN
      RETURN 0;
    END IF;
  END IF;

  SELECT c_balance, c_first, c_middle, c_last INTO v_cust
  FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = v_c_id;
  IF NOT FOUND THEN
    RETURN 0;
  END IF;

  SELECT o_id, o_entry_d, o_carrier_id INTO v_o_id, v_entry, v_carrier
  FROM orders
  WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id
  ORDER BY o_id DESC LIMIT 1;
  IF NOT FOUND THEN
    RETURN 0;
  END IF;

  PERFORM ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
  FROM order_line
  WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o_id;

  RETURN v_o_id;
END;
$$;

-- Delivery (clause 2.7.4), all ten districts in one call. Returns the number of
-- districts that had an undelivered order. The oldest NEW_ORDER row is locked
-- with FOR UPDATE (no SKIP LOCKED): a concurrent Delivery of the same warehouse
-- waits, then moves on to the next order once the first one is committed, so
-- every order is delivered exactly once and oldest first.
CREATE OR REPLACE FUNCTION delivery(p_w_id integer, p_carrier_id integer)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_d_id      integer;
  v_o_id      integer;
  v_c_id      integer;
  v_amount    numeric;
  v_delivered integer := 0;
BEGIN
  FOR v_d_id IN 1..10 LOOP
    SELECT no_o_id INTO v_o_id
    FROM new_order
    WHERE no_w_id = p_w_id AND no_d_id = v_d_id
    ORDER BY no_o_id LIMIT 1
    FOR UPDATE;
    CONTINUE WHEN NOT FOUND;

    DELETE FROM new_order
    WHERE no_w_id = p_w_id AND no_d_id = v_d_id AND no_o_id = v_o_id;

    UPDATE orders SET o_carrier_id = p_carrier_id
    WHERE o_w_id = p_w_id AND o_d_id = v_d_id AND o_id = v_o_id
    RETURNING o_c_id INTO v_c_id;

    WITH ol AS (
      UPDATE order_line SET ol_delivery_d = now()
      WHERE ol_w_id = p_w_id AND ol_d_id = v_d_id AND ol_o_id = v_o_id
      RETURNING ol_amount)
    SELECT coalesce(sum(ol_amount), 0) INTO v_amount FROM ol;

    UPDATE customer SET c_balance = c_balance + v_amount,
                        c_delivery_cnt = c_delivery_cnt + 1
    WHERE c_w_id = p_w_id AND c_d_id = v_d_id AND c_id = v_c_id;

    v_delivered := v_delivered + 1;
  END LOOP;
  RETURN v_delivered;
END;
$$;

-- Stock-Level (clause 2.8.2). Returns the number of distinct items of the
-- district's last 20 orders whose stock in the warehouse is below threshold.
CREATE OR REPLACE FUNCTION slev(p_w_id integer, p_d_id integer, p_threshold integer)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_next  integer;
  v_count integer;
BEGIN
  SELECT d_next_o_id INTO v_next
  FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
  IF NOT FOUND THEN
    RETURN 0;
  END IF;

  SELECT count(DISTINCT s.s_i_id) INTO v_count
  FROM order_line ol
  JOIN stock s ON s.s_w_id = p_w_id AND s.s_i_id = ol.ol_i_id
  WHERE ol.ol_w_id = p_w_id AND ol.ol_d_id = p_d_id
    AND ol.ol_o_id >= v_next - 20 AND ol.ol_o_id < v_next
    AND s.s_quantity < p_threshold;

  RETURN v_count;
END;
$$;
